/* Matrix-vector product y = A x. */
#define N 64
#define M 64

void kernel_mv(float A[N][M], float x[M], float y[N]) {
#pragma scop
  for (int i = 0; i < N; i++) {
    y[i] = 0;
    for (int j = 0; j < M; j++)
      y[i] += A[i][j] * x[j];
  }
#pragma endscop
}
