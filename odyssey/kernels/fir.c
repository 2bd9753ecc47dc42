/* FIR filter / 1D convolution with T taps, integer samples and coefficients. */
#define N 128
#define T 16

void kernel_fir(short x[N + T - 1], short h[T], int y[N]) {
#pragma scop
  for (int i = 0; i < N; i++) {
    y[i] = 0;
    for (int j = 0; j < T; j++)
      y[i] += x[i + j] * h[j];
  }
#pragma endscop
}
