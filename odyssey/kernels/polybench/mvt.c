/* PolyBench/C 4.2 mvt in its own form, written for odyssey: x1 += A y1; x2 += A^T y2, two
 * independent matrix-vector products in one scop: odyssey rejects it (one computation per
 * scop); mvt_x1.c and mvt_x2.c are the two computations, each mapped on its own. */
#define N 64

void kernel_mvt(float x1[N], float x2[N], float y_1[N], float y_2[N], float A[N][N]) {
#pragma scop
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      x1[i] = x1[i] + A[i][j] * y_1[j];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      x2[i] = x2[i] + A[j][i] * y_2[j];
#pragma endscop
}
