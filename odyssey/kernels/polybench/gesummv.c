/* PolyBench/C 4.2 gesummv in its own form, written for odyssey: y := alpha*A*x + beta*B*x.
 * Two reductions (tmp and y) in one nest, combined after it: odyssey rejects this form (see
 * gesummv_fused.c for the single-reduction form it maps). */
#define N 64

void kernel_gesummv(float alpha, float beta, float A[N][N], float B[N][N], float tmp[N],
                    float x[N], float y[N]) {
#pragma scop
  for (int i = 0; i < N; i++) {
    tmp[i] = 0;
    y[i] = 0;
    for (int j = 0; j < N; j++) {
      tmp[i] = A[i][j] * x[j] + tmp[i];
      y[i] = B[i][j] * x[j] + y[i];
    }
    y[i] = alpha * tmp[i] + beta * y[i];
  }
#pragma endscop
}
