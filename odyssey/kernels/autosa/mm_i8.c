/* 8-bit matrix multiplication as in AutoSA's large int8 U250 design
 * (autosa_tests/large/mm_int8: data_t is char, the accumulator too; B[j][k]). */
#define I 64
#define J 64
#define K 64

void kernel_mm_i8(signed char A[I][K], signed char B[J][K], signed char C[I][J]) {
#pragma scop
  for (int i = 0; i < I; i++)
    for (int j = 0; j < J; j++) {
      C[i][j] = 0;
      for (int k = 0; k < K; k++)
        C[i][j] = C[i][j] + A[i][k] * B[j][k];
    }
#pragma endscop
}
