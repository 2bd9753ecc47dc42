/* PolyBench/C 4.2 atax in its own form, written for odyssey: y := A^T (A x). The second
 * reduction reads tmp, the first one's result: two dependent computations in one nest,
 * which odyssey rejects (run tmp = A x and y = A^T tmp as two kernels). */
#define M 64
#define N 64

void kernel_atax(float A[M][N], float x[N], float y[N], float tmp[M]) {
#pragma scop
  for (int i = 0; i < N; i++)
    y[i] = 0;
  for (int i = 0; i < M; i++) {
    tmp[i] = 0;
    for (int j = 0; j < N; j++)
      tmp[i] = tmp[i] + A[i][j] * x[j];
    for (int j = 0; j < N; j++)
      y[j] = y[j] + A[i][j] * tmp[i];
  }
#pragma endscop
}
