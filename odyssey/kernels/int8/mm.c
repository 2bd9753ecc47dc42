/* mm.c with int8 inputs and weights, int32 accumulation (the quantized datapath of `odyssey network --dtype int8`). */
/* Matrix multiplication C = A * B (odyssey bundled kernel).
 * Sizes are size parameters: override them with -D I=... -D J=... -D K=... */
#define I 64
#define J 64
#define K 64

void kernel_mm(signed char A[I][K], signed char B[K][J], int C[I][J]) {
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      C[i][j] = 0;
      for (int k = 0; k < K; k++)
        C[i][j] += A[i][k] * B[k][j];
    }
#pragma endscop
}
