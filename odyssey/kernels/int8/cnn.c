/* cnn.c with int8 inputs and weights, int32 accumulation (the quantized datapath of `odyssey network --dtype int8`). */
/* One CNN convolution layer (the Odyssey paper's Listing 1): batch 1, stride 1.
 * O output channels, I input channels, H x W output feature map, P x Q kernel.
 * The weight array is `wt` (not `w` as in the paper) so the loop iterator `w` does not shadow it.
 * Override sizes per layer with -D O=... -D I=... -D H=... -D W=... -D P=... -D Q=... */
#define O 16
#define I 16
#define H 16
#define W 16
#define P 3
#define Q 3

void kernel_cnn(signed char fi[I][H + P - 1][W + Q - 1], signed char wt[O][I][P][Q], int fo[O][H][W]) {
#pragma scop
  for (int o = 0; o < O; o++)
    for (int h = 0; h < H; h++)
      for (int w = 0; w < W; w++) {
        fo[o][h][w] = 0;
        for (int i = 0; i < I; i++)
          for (int p = 0; p < P; p++)
            for (int q = 0; q < Q; q++)
              fo[o][h][w] += fi[i][h + p][w + q] * wt[o][i][p][q];
      }
#pragma endscop
}
