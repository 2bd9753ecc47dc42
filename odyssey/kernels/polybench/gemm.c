/* PolyBench/C 4.2 gemm in its own form, written for odyssey: C := alpha*A*B + beta*C.
 * `C[i][j] *= beta` scales the start value read from DRAM (in the PEs' drain), `alpha` is a
 * scalar argument broadcast to the PEs. Note the PolyBench loop order i, k, j. */
#define NI 64
#define NJ 64
#define NK 64

void kernel_gemm(float alpha, float beta, float C[NI][NJ], float A[NI][NK], float B[NK][NJ]) {
#pragma scop
  for (int i = 0; i < NI; i++) {
    for (int j = 0; j < NJ; j++)
      C[i][j] *= beta;
    for (int k = 0; k < NK; k++)
      for (int j = 0; j < NJ; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
#pragma endscop
}
