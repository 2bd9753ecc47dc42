/* LU decomposition without pivoting (right-looking update only). Its dependences are
 * not uniform, so odyssey rejects it with the reason; it is here to show that. */
#define N 32

void kernel_lu(float A[N][N]) {
#pragma scop
  for (int k = 0; k < N; k++)
    for (int i = k + 1; i < N; i++)
      for (int j = k + 1; j < N; j++)
        A[i][j] -= A[i][k] * A[k][j];
#pragma endscop
}
