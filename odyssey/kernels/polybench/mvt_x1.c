/* The first computation of PolyBench mvt (written for odyssey): x1 += A y1. */
#define N 64

void kernel_mvt_x1(float x1[N], float y_1[N], float A[N][N]) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      x1[i] = x1[i] + A[i][j] * y_1[j];
#pragma endscop
}
