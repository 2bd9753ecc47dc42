/* 8-bit integer matrix multiplication, written for odyssey after AutoSA's int8 test: B is
 * stored transposed (B[j][k]); products of int8_t operands accumulate in 32-bit integers. */
#include <stdint.h>
#define I 64
#define J 64
#define K 64

void kernel_mm_int8(int8_t A[I][K], int8_t B[J][K], int32_t C[I][J]) {
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      C[i][j] = 0;
      for (int k = 0; k < K; k++)
        C[i][j] = C[i][j] + A[i][k] * B[j][k];
    }
#pragma endscop
}
