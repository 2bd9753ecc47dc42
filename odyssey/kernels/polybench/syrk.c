/* PolyBench/C 4.2 syrk in its own form, written for odyssey: C := alpha*A*A^T + beta*C on the
 * lower triangle (j <= i); the upper triangle of C is left as it is. */
#define N 32
#define M 32

void kernel_syrk(float alpha, float beta, float C[N][N], float A[N][M]) {
#pragma scop
  for (int i = 0; i < N; i++) {
    for (int j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (int k = 0; k < M; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
#pragma endscop
}
