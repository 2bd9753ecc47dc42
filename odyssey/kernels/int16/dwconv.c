/* dwconv.c with int16 inputs and weights, int32 accumulation (`odyssey network --dtype int16`). */
/* Depthwise convolution (MobileNet): one P x Q filter per channel, stride 1. */
#define C 16
#define H 16
#define W 16
#define P 3
#define Q 3

void kernel_dwconv(short fi[C][H + P - 1][W + Q - 1], short wt[C][P][Q], int fo[C][H][W]) {
#pragma scop
  for (int c = 0; c < C; c++)
    for (int h = 0; h < H; h++)
      for (int w = 0; w < W; w++) {
        fo[c][h][w] = 0;
        for (int p = 0; p < P; p++)
          for (int q = 0; q < Q; q++)
            fo[c][h][w] += fi[c][h + p][w + q] * wt[c][p][q];
      }
#pragma endscop
}
