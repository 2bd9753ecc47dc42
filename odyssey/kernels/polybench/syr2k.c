/* PolyBench/C 4.2 syr2k in its own form, written for odyssey:
 * C := alpha*A*B^T + alpha*B*A^T + beta*C on the lower triangle (j <= i). */
#define N 32
#define M 32

void kernel_syr2k(float alpha, float beta, float C[N][N], float A[N][M], float B[N][M]) {
#pragma scop
  for (int i = 0; i < N; i++) {
    for (int j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (int k = 0; k < M; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
  }
#pragma endscop
}
