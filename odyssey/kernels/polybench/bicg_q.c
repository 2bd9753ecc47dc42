/* The second computation of PolyBench bicg (written for odyssey): q := A p. */
#define M 64
#define N 64

void kernel_bicg_q(float A[N][M], float q[N], float p[M]) {
#pragma scop
  for (int i = 0; i < N; i++) {
    q[i] = 0;
    for (int j = 0; j < M; j++)
      q[i] = q[i] + A[i][j] * p[j];
  }
#pragma endscop
}
