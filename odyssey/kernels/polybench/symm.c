/* PolyBench/C 4.2 symm in its own form, written for odyssey: C := alpha*A*B + beta*C with A
 * symmetric (lower triangle stored). It keeps a scalar temporary (temp2) across the k loop
 * and updates C[k][j] and C[i][j] in one nest: odyssey rejects it. */
#define M 32
#define N 32

void kernel_symm(float alpha, float beta, float C[M][N], float A[M][M], float B[M][N]) {
  float temp2;
#pragma scop
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      temp2 = 0;
      for (int k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
#pragma endscop
}
