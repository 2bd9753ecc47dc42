/* Symmetric rank-k update, lower triangle: C += A A^T for j <= i (non-rectangular domain). */
#define N 32
#define K 32

void kernel_syrk(float A[N][K], float C[N][N]) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j <= i; j++)
      for (int k = 0; k < K; k++)
        C[i][j] += A[i][k] * A[j][k];
#pragma endscop
}
