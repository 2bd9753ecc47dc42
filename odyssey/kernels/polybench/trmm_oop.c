/* trmm out of place (written for odyssey): Out := alpha * A^T B with A unit lower triangular,
 * its unit diagonal stored (A[i][i] = 1, as PolyBench's init_array sets it). In place,
 * PolyBench's trmm reads rows k > i of B that are not yet updated, so writing the result to
 * Out computes the same values: Out[i][j] = alpha * (B[i][j] + sum_{k > i} A[k][i] B[k][j]). */
#define M 32
#define N 32

void kernel_trmm_oop(float alpha, float A[M][M], float B[M][N], float Out[M][N]) {
#pragma scop
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      Out[i][j] = 0;
      for (int k = i; k < M; k++)
        Out[i][j] += A[k][i] * B[k][j];
      Out[i][j] = alpha * Out[i][j];
    }
#pragma endscop
}
