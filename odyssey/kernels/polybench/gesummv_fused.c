/* gesummv with its two reductions fused into one (written for odyssey):
 * y := alpha*A*x + beta*B*x as one sum over j, the form odyssey maps. */
#define N 64

void kernel_gesummv_fused(float alpha, float beta, float A[N][N], float B[N][N], float x[N],
                          float y[N]) {
#pragma scop
  for (int i = 0; i < N; i++) {
    y[i] = 0;
    for (int j = 0; j < N; j++)
      y[i] = y[i] + alpha * A[i][j] * x[j] + beta * B[i][j] * x[j];
  }
#pragma endscop
}
