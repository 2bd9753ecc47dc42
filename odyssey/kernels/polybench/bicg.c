/* PolyBench/C 4.2 bicg in its own form, written for odyssey: s := A^T r, q := A p, two
 * independent reductions in one nest: odyssey rejects it (one computation per scop);
 * bicg_s.c and bicg_q.c are the two computations, each mapped on its own. */
#define M 64
#define N 64

void kernel_bicg(float A[N][M], float s[M], float q[N], float p[M], float r[N]) {
#pragma scop
  for (int i = 0; i < M; i++)
    s[i] = 0;
  for (int i = 0; i < N; i++) {
    q[i] = 0;
    for (int j = 0; j < M; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
#pragma endscop
}
