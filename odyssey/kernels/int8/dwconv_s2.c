/* dwconv_s2.c with int8 inputs and weights, int32 accumulation (the quantized datapath of `odyssey network --dtype int8`). */
/* Depthwise convolution of stride 2 (dwconv.c with the input read at 2*h + p, 2*w + q):
 * one P x Q filter per channel; the input feature map is (2*H + P - 2) x (2*W + Q - 2).
 * `odyssey network` tunes the stride-2 depthwise layers with it. */
#define C 16
#define H 16
#define W 16
#define P 3
#define Q 3

void kernel_dwconv_s2(signed char fi[C][2 * H + P - 2][2 * W + Q - 2], signed char wt[C][P][Q],
                      int fo[C][H][W]) {
#pragma scop
  for (int c = 0; c < C; c++)
    for (int h = 0; h < H; h++)
      for (int w = 0; w < W; w++) {
        fo[c][h][w] = 0;
        for (int p = 0; p < P; p++)
          for (int q = 0; q < Q; q++)
            fo[c][h][w] += fi[c][2 * h + p][2 * w + q] * wt[c][p][q];
      }
#pragma endscop
}
