// odyssey_bits.h -- portable bit-cast helpers for generated designs (namespace odyssey).
//
// Not a Vitis header: ship it next to generated sources for both builds (g++ C simulation
// and Vitis HLS synthesis). Uses union type punning, which g++ defines and Vitis HLS
// synthesizes, and needs neither ap_int.h nor hls_stream.h.
//     w(32 * i + 31, 32 * i) = odyssey::float_to_bits(x);          // pack
//     float y = odyssey::bits_to_float(w(32 * i + 31, 32 * i).to_uint());  // unpack
#ifndef ODYSSEY_BITS_H
#define ODYSSEY_BITS_H

namespace odyssey {

inline unsigned int float_to_bits(float value) {
  union {
    float f;
    unsigned int u;
  } cast;
  cast.f = value;
  return cast.u;
}

inline float bits_to_float(unsigned int bits) {
  union {
    float f;
    unsigned int u;
  } cast;
  cast.u = bits;
  return cast.f;
}

inline unsigned long long double_to_bits(double value) {
  union {
    double d;
    unsigned long long u;
  } cast;
  cast.d = value;
  return cast.u;
}

inline double bits_to_double(unsigned long long bits) {
  union {
    double d;
    unsigned long long u;
  } cast;
  cast.u = bits;
  return cast.d;
}

}  // namespace odyssey

#endif  // ODYSSEY_BITS_H
