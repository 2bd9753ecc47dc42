/* cnn_s2.c with int16 inputs and weights, int32 accumulation (`odyssey network --dtype int16`). */
/* One CNN convolution layer of stride 2 (cnn.c with the input read at 2*h + p, 2*w + q):
 * batch 1. O output channels, I input channels, H x W output feature map, P x Q kernel;
 * the input feature map is (2*H + P - 2) x (2*W + Q - 2), padding included.
 * `odyssey network` tunes the stride-2 conv and pointwise layers with it.
 * Override sizes per layer with -D O=... -D I=... -D H=... -D W=... -D P=... -D Q=... */
#define O 16
#define I 16
#define H 16
#define W 16
#define P 3
#define Q 3

void kernel_cnn_s2(short fi[I][2 * H + P - 2][2 * W + Q - 2], short wt[O][I][P][Q],
                   int fo[O][H][W]) {
#pragma scop
  for (int o = 0; o < O; o++)
    for (int h = 0; h < H; h++)
      for (int w = 0; w < W; w++) {
        fo[o][h][w] = 0;
        for (int i = 0; i < I; i++)
          for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
              fo[o][h][w] += fi[i][2 * h + p][2 * w + q] * wt[o][i][p][q];
      }
#pragma endscop
}
