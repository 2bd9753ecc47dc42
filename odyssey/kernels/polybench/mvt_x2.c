/* The second computation of PolyBench mvt (written for odyssey): x2 += A^T y2. */
#define N 64

void kernel_mvt_x2(float x2[N], float y_2[N], float A[N][N]) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      x2[i] = x2[i] + A[j][i] * y_2[j];
#pragma endscop
}
