/* PolyBench/C 4.2 trmm in its own form, written for odyssey: B := alpha * A^T B with A unit
 * lower triangular, computed in place. B is written as B[i][j] and read as B[k][j]: the
 * dependence between the two is not uniform, so odyssey rejects this form (see trmm_oop.c). */
#define M 32
#define N 32

void kernel_trmm(float alpha, float A[M][M], float B[M][N]) {
#pragma scop
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      for (int k = i + 1; k < M; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
#pragma endscop
}
