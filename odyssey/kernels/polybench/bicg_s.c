/* The first computation of PolyBench bicg (written for odyssey): s := A^T r, initialised in
 * a loop of its own (as in PolyBench). */
#define M 64
#define N 64

void kernel_bicg_s(float A[N][M], float s[M], float r[N]) {
#pragma scop
  for (int i = 0; i < M; i++)
    s[i] = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      s[j] = s[j] + r[i] * A[i][j];
#pragma endscop
}
