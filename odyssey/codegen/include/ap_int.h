// ap_int.h -- odyssey stand-in for the Vitis HLS arbitrary-precision integers ap_uint<W>, ap_int<W>.
//
// Only for building generated designs with a plain C++17 compiler. Vitis builds use the vendor
// header of the same name instead, so generated code must stay within this common subset:
//   construction / assignment from C integers, other ap_(u)int widths, ranges and bits;
//   to_uint64() to_int64() to_uint() to_int() to_ulong() to_long() to_bool() length();
//   implicit conversion to a 64-bit C integer (low 64 bits; sign-extended for ap_int);
//   range(hi, lo) / operator()(hi, lo) / range() -> proxy assignable from integers and
//   ap_(u)int, convertible to unsigned long long and (via constructor) to ap_(u)int;
//   operator[](bit) -> bit proxy; get_bit(i) set_bit(i, v);
//   == != < <= > >= (mathematical values), ~ & | ^ << >> + - * and compound forms, ++ --.
// Result widths follow Vitis: & | ^ keep max width, + and - widen by one bit, * adds widths,
// shifts keep the left operand's type (a negative amount shifts the other way).
// Storage: W bits in 64-bit words, bits above W always zero (two's complement for ap_int).
// Unsupported: reversed ranges (hi < lo), division, concatenation, strings, floating point.
#ifndef ODYSSEY_AP_INT_H
#define ODYSSEY_AP_INT_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

#ifndef AP_INT_MAX_W
#define AP_INT_MAX_W 1024
#endif

// The word-level helpers behind a bit-range read or write: inlined at every optimisation level
// (a simulation built with -Og would otherwise spend most of its time calling them).
#define ODYSSEY_AP_INLINE inline __attribute__((always_inline))

template <int W, bool S>
class ap_int_base;
template <int W, bool S>
class ap_range_ref;
template <int W, bool S>
class ap_bit_ref;
template <int W>
class ap_uint;
template <int W>
class ap_int;

namespace odyssey_ap {

template <typename I>
constexpr bool is_int = std::is_integral<I>::value;

template <typename I>
using enable_int = std::enable_if_t<is_int<I>, int>;

// C integer I viewed as an ap_int_base.
template <typename I>
using int_base = ap_int_base<std::is_same<I, bool>::value ? 1 : 8 * static_cast<int>(sizeof(I)),
                             std::is_signed<I>::value>;

constexpr int max_i(int a, int b) { return a > b ? a : b; }

// Width of the common type of a W1/S1 and a W2/S2 operand (Vitis rule).
constexpr int common_width(int w1, bool s1, int w2, bool s2) {
  return max_i(w1 + ((!s1 && s2) ? 1 : 0), w2 + ((s1 && !s2) ? 1 : 0));
}

__extension__ typedef unsigned __int128 u128;  // g++/clang++ only, like this whole header

ODYSSEY_AP_INLINE std::uint64_t mask(int n) { return n >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1); }

[[noreturn]] inline void fail(const char* what, int a, int b, int w) {
  std::fprintf(stderr, "ap_int stand-in: %s (%d, %d) on a %d-bit value\n", what, a, b, w);
  std::abort();
}

// 64 bits of `a` (n words) starting at bit `pos` >= 0; bits past the end read as `fill`.
ODYSSEY_AP_INLINE std::uint64_t extract64(const std::uint64_t* a, int n, int pos, std::uint64_t fill) {
  const int wi = pos >> 6;
  const int sh = pos & 63;
  const std::uint64_t lo = wi < n ? a[wi] : fill;
  if (sh == 0) return lo;
  const std::uint64_t hi = wi + 1 < n ? a[wi + 1] : fill;
  return (lo >> sh) | (hi << (64 - sh));
}

// Writes the low `cnt` (<= 64) bits of `v` into `dst` (n words) at bit `pos`.
ODYSSEY_AP_INLINE void deposit64(std::uint64_t* dst, int n, int pos, int cnt, std::uint64_t v) {
  const int wi = pos >> 6;
  const int sh = pos & 63;
  const std::uint64_t m = mask(cnt);
  v &= m;
  dst[wi] = (dst[wi] & ~(m << sh)) | (v << sh);
  if (sh != 0 && sh + cnt > 64 && wi + 1 < n) {
    const std::uint64_t m2 = mask(sh + cnt - 64);
    dst[wi + 1] = (dst[wi + 1] & ~m2) | ((v >> (64 - sh)) & m2);
  }
}

}  // namespace odyssey_ap

template <int W, bool S>
class ap_int_base {
  static_assert(W >= 1, "ap_int width must be at least 1");

 public:
  static constexpr int width = W;
  static constexpr bool sign_flag = S;
  static constexpr int words = (W + 63) / 64;
  using native_t = std::conditional_t<S, long long, unsigned long long>;

  // Little-endian 64-bit words; bits at and above W are kept zero. Public for the operators.
  std::uint64_t odyssey_words[words];

  ap_int_base() : odyssey_words{} {}

  template <typename I, odyssey_ap::enable_int<I> = 0>
  ap_int_base(I value) : odyssey_words{} {
    const bool negative = std::is_signed<I>::value && value < 0;
    odyssey_words[0] = std::is_signed<I>::value
                           ? static_cast<std::uint64_t>(static_cast<long long>(value))
                           : static_cast<std::uint64_t>(value);
    for (int k = 1; k < words; ++k) odyssey_words[k] = negative ? ~std::uint64_t{0} : 0;
    normalize();
  }

  template <int W2, bool S2>
  ap_int_base(const ap_int_base<W2, S2>& other) : odyssey_words{} {
    const std::uint64_t fill = other.is_negative() ? ~std::uint64_t{0} : 0;
    for (int k = 0; k < words; ++k) {
      odyssey_words[k] = k < other.words ? other.odyssey_words[k] : fill;
    }
    if (fill != 0 && W > W2) {  // sign-extend inside the top source word
      odyssey_words[other.words - 1] |= ~odyssey_ap::mask(((W2 - 1) & 63) + 1);
    }
    normalize();
  }

  template <int W2, bool S2>
  ap_int_base(const ap_range_ref<W2, S2>& ref) : ap_int_base(ref.get()) {}

  template <int W2, bool S2>
  ap_int_base(const ap_bit_ref<W2, S2>& ref) : ap_int_base(static_cast<bool>(ref)) {}

  // ---- queries and conversions -------------------------------------------------------------
  static constexpr int length() { return W; }

  bool get_bit(int i) const {
    if (i < 0 || i >= W) odyssey_ap::fail("bit index out of range", i, i, W);
    return ((odyssey_words[i >> 6] >> (i & 63)) & 1u) != 0;
  }

  void set_bit(int i, bool v) {
    if (i < 0 || i >= W) odyssey_ap::fail("bit index out of range", i, i, W);
    const std::uint64_t bit = std::uint64_t{1} << (i & 63);
    odyssey_words[i >> 6] = v ? (odyssey_words[i >> 6] | bit) : (odyssey_words[i >> 6] & ~bit);
  }

  bool is_negative() const { return S && get_bit(W - 1); }

  bool iszero() const {
    for (int k = 0; k < words; ++k) {
      if (odyssey_words[k] != 0) return false;
    }
    return true;
  }

  // Low 64 bits, sign-extended from bit W-1 for ap_int.
  unsigned long long to_uint64() const {
    std::uint64_t v = odyssey_words[0];
    if (W < 64 && is_negative()) v |= ~odyssey_ap::mask(W);
    return v;
  }
  long long to_int64() const { return static_cast<long long>(to_uint64()); }
  unsigned to_uint() const { return static_cast<unsigned>(to_uint64()); }
  int to_int() const { return static_cast<int>(to_uint64()); }
  unsigned long to_ulong() const { return static_cast<unsigned long>(to_uint64()); }
  long to_long() const { return static_cast<long>(to_uint64()); }
  bool to_bool() const { return !iszero(); }

  operator native_t() const { return static_cast<native_t>(to_uint64()); }

  // ---- bit and range access ----------------------------------------------------------------
  ODYSSEY_AP_INLINE ap_range_ref<W, S> range(int hi, int lo) { return ap_range_ref<W, S>(*this, hi, lo); }
  ODYSSEY_AP_INLINE ap_range_ref<W, S> range(int hi, int lo) const {
    return ap_range_ref<W, S>(const_cast<ap_int_base&>(*this), hi, lo);
  }
  ap_range_ref<W, S> range() { return range(W - 1, 0); }
  ap_range_ref<W, S> range() const { return range(W - 1, 0); }
  ODYSSEY_AP_INLINE ap_range_ref<W, S> operator()(int hi, int lo) { return range(hi, lo); }
  ODYSSEY_AP_INLINE ap_range_ref<W, S> operator()(int hi, int lo) const { return range(hi, lo); }

  ap_bit_ref<W, S> operator[](int i) { return ap_bit_ref<W, S>(*this, i); }
  bool operator[](int i) const { return get_bit(i); }

  // ---- compound assignment -----------------------------------------------------------------
  template <typename R>
  ap_int_base& operator+=(const R& r) { return *this = *this + r; }
  template <typename R>
  ap_int_base& operator-=(const R& r) { return *this = *this - r; }
  template <typename R>
  ap_int_base& operator*=(const R& r) { return *this = *this * r; }
  template <typename R>
  ap_int_base& operator&=(const R& r) { return *this = *this & r; }
  template <typename R>
  ap_int_base& operator|=(const R& r) { return *this = *this | r; }
  template <typename R>
  ap_int_base& operator^=(const R& r) { return *this = *this ^ r; }
  template <typename R>
  ap_int_base& operator<<=(const R& r) { return *this = *this << r; }
  template <typename R>
  ap_int_base& operator>>=(const R& r) { return *this = *this >> r; }

  ap_int_base& operator++() { return *this += 1; }
  ap_int_base& operator--() { return *this -= 1; }
  ap_int_base operator++(int) {
    ap_int_base old = *this;
    *this += 1;
    return old;
  }
  ap_int_base operator--(int) {
    ap_int_base old = *this;
    *this -= 1;
    return old;
  }

  void normalize() { odyssey_words[words - 1] &= odyssey_ap::mask(((W - 1) & 63) + 1); }
};

// ---- range and bit proxies -------------------------------------------------------------------

template <int W, bool S>
class ap_range_ref {
 public:
  ODYSSEY_AP_INLINE ap_range_ref(ap_int_base<W, S>& ref, int hi, int lo) : ref_(ref), hi_(hi), lo_(lo) {
    if (lo < 0 || hi >= W || hi < lo) {
      odyssey_ap::fail("range (hi, lo) out of bounds or reversed", hi, lo, W);
    }
  }

  ODYSSEY_AP_INLINE int length() const { return hi_ - lo_ + 1; }

  // The selected bits as an unsigned value.
  ap_int_base<W, false> get() const {
    ap_int_base<W, false> out;
    for (int k = 0; k < out.words; ++k) {
      out.odyssey_words[k] = odyssey_ap::extract64(ref_.odyssey_words, ref_.words, lo_ + 64 * k, 0);
    }
    const int len = length();
    for (int k = 0; k < out.words; ++k) {
      const int below = len - 64 * k;
      out.odyssey_words[k] &= below <= 0 ? 0 : odyssey_ap::mask(below);
    }
    return out;
  }

  template <int W2, bool S2>
  ap_range_ref& operator=(const ap_int_base<W2, S2>& value) {
    const ap_int_base<W, S2> v(value);  // truncated or extended to the reference's width
    const int len = length();
    for (int off = 0; off < len; off += 64) {
      const int cnt = len - off < 64 ? len - off : 64;
      odyssey_ap::deposit64(ref_.odyssey_words, ref_.words, lo_ + off, cnt,
                            odyssey_ap::extract64(v.odyssey_words, v.words, off, 0));
    }
    return *this;
  }

  // A C integer: its two's-complement bits (sign- or zero-extended to 64, as the conversion
  // to a W-bit value would) go to the low `length()` bits; wider ranges take the general path.
  template <typename I, odyssey_ap::enable_int<I> = 0>
  ODYSSEY_AP_INLINE ap_range_ref& operator=(I value) {
    const int len = length();
    if (len > 64) return *this = odyssey_ap::int_base<I>(value);
    const std::uint64_t bits = std::is_signed<I>::value
                                   ? static_cast<std::uint64_t>(static_cast<long long>(value))
                                   : static_cast<std::uint64_t>(value);
    odyssey_ap::deposit64(ref_.odyssey_words, ref_.words, lo_, len, bits);
    return *this;
  }

  ap_range_ref& operator=(const ap_range_ref& other) { return *this = other.get(); }

  template <int W2, bool S2>
  ap_range_ref& operator=(const ap_range_ref<W2, S2>& other) { return *this = other.get(); }

  template <int W2, bool S2>
  ap_range_ref& operator=(const ap_bit_ref<W2, S2>& bit) { return *this = static_cast<bool>(bit); }

  ODYSSEY_AP_INLINE operator unsigned long long() const { return to_uint64(); }

  // The low 64 selected bits (what get().to_uint64() gives, without building the W-bit value).
  ODYSSEY_AP_INLINE unsigned long long to_uint64() const {
    return odyssey_ap::extract64(ref_.odyssey_words, ref_.words, lo_, 0) & odyssey_ap::mask(length());
  }
  long long to_int64() const { return static_cast<long long>(to_uint64()); }
  unsigned to_uint() const { return static_cast<unsigned>(to_uint64()); }
  int to_int() const { return static_cast<int>(to_uint64()); }
  unsigned long to_ulong() const { return static_cast<unsigned long>(to_uint64()); }
  long to_long() const { return static_cast<long>(to_uint64()); }

 private:
  ap_int_base<W, S>& ref_;
  int hi_;
  int lo_;
};

template <int W, bool S>
class ap_bit_ref {
 public:
  ap_bit_ref(ap_int_base<W, S>& ref, int index) : ref_(ref), index_(index) {
    if (index < 0 || index >= W) odyssey_ap::fail("bit index out of range", index, index, W);
  }

  operator bool() const { return ref_.get_bit(index_); }
  bool to_bool() const { return ref_.get_bit(index_); }
  bool operator~() const { return !ref_.get_bit(index_); }

  template <typename I, odyssey_ap::enable_int<I> = 0>
  ap_bit_ref& operator=(I value) {
    ref_.set_bit(index_, value != 0);
    return *this;
  }

  ap_bit_ref& operator=(const ap_bit_ref& other) { return *this = static_cast<bool>(other); }

  template <int W2, bool S2>
  ap_bit_ref& operator=(const ap_bit_ref<W2, S2>& other) { return *this = static_cast<bool>(other); }

  template <int W2, bool S2>
  ap_bit_ref& operator=(const ap_int_base<W2, S2>& value) { return *this = value.get_bit(0); }

 private:
  ap_int_base<W, S>& ref_;
  int index_;
};

// ---- user-facing types -----------------------------------------------------------------------

template <int W>
class ap_uint : public ap_int_base<W, false> {
  static_assert(W <= AP_INT_MAX_W, "ap_uint width exceeds AP_INT_MAX_W (Vitis default 1024)");
  using base_t = ap_int_base<W, false>;

 public:
  ap_uint() = default;
  template <typename I, odyssey_ap::enable_int<I> = 0>
  ap_uint(I value) : base_t(value) {}
  template <int W2, bool S2>
  ap_uint(const ap_int_base<W2, S2>& other) : base_t(other) {}
  template <int W2, bool S2>
  ap_uint(const ap_range_ref<W2, S2>& ref) : base_t(ref) {}
  template <int W2, bool S2>
  ap_uint(const ap_bit_ref<W2, S2>& ref) : base_t(ref) {}
};

template <int W>
class ap_int : public ap_int_base<W, true> {
  static_assert(W <= AP_INT_MAX_W, "ap_int width exceeds AP_INT_MAX_W (Vitis default 1024)");
  using base_t = ap_int_base<W, true>;

 public:
  ap_int() = default;
  template <typename I, odyssey_ap::enable_int<I> = 0>
  ap_int(I value) : base_t(value) {}
  template <int W2, bool S2>
  ap_int(const ap_int_base<W2, S2>& other) : base_t(other) {}
  template <int W2, bool S2>
  ap_int(const ap_range_ref<W2, S2>& ref) : base_t(ref) {}
  template <int W2, bool S2>
  ap_int(const ap_bit_ref<W2, S2>& ref) : base_t(ref) {}
};

// ---- operators -------------------------------------------------------------------------------

namespace odyssey_ap {

template <int W, bool S>
bool compare_less(const ap_int_base<W, S>& a, const ap_int_base<W, S>& b) {
  const bool na = a.is_negative();
  const bool nb = b.is_negative();
  if (na != nb) return na;
  for (int k = a.words - 1; k >= 0; --k) {
    if (a.odyssey_words[k] != b.odyssey_words[k]) return a.odyssey_words[k] < b.odyssey_words[k];
  }
  return false;
}

template <int W, bool S, int W2, bool S2>
using cmp_t = ap_int_base<max_i(W, W2) + 1, true>;

template <int W, bool S>
ap_int_base<W, S> add(const ap_int_base<W, S>& a, const ap_int_base<W, S>& b) {
  ap_int_base<W, S> r;
  std::uint64_t carry = 0;
  for (int k = 0; k < r.words; ++k) {
    const std::uint64_t s = a.odyssey_words[k] + carry;
    const std::uint64_t c1 = s < carry ? 1 : 0;
    r.odyssey_words[k] = s + b.odyssey_words[k];
    carry = c1 + (r.odyssey_words[k] < s ? 1 : 0);
  }
  r.normalize();
  return r;
}

template <int W, bool S>
ap_int_base<W, S> negate(const ap_int_base<W, S>& a) {
  ap_int_base<W, S> inv;
  for (int k = 0; k < inv.words; ++k) inv.odyssey_words[k] = ~a.odyssey_words[k];
  inv.normalize();
  return add(inv, ap_int_base<W, S>(1));
}

template <int W, bool S>
ap_int_base<W, S> shift_left(const ap_int_base<W, S>& a, long long n) {
  ap_int_base<W, S> r;
  if (n >= W) return r;
  const int s = static_cast<int>(n);
  const int ws = s >> 6;
  const int bs = s & 63;
  for (int k = r.words - 1; k >= 0; --k) {
    const int src = k - ws;
    std::uint64_t v = 0;
    if (src >= 0) {
      v = a.odyssey_words[src] << bs;
      if (bs != 0 && src >= 1) v |= a.odyssey_words[src - 1] >> (64 - bs);
    }
    r.odyssey_words[k] = v;
  }
  r.normalize();
  return r;
}

template <int W, bool S>
ap_int_base<W, S> shift_right(const ap_int_base<W, S>& a, long long n) {
  const bool neg = a.is_negative();
  const std::uint64_t fill = neg ? ~std::uint64_t{0} : 0;
  std::uint64_t tmp[ap_int_base<W, S>::words];
  for (int k = 0; k < a.words; ++k) tmp[k] = a.odyssey_words[k];
  if (neg) tmp[a.words - 1] |= ~mask(((W - 1) & 63) + 1);
  const int s = static_cast<int>(n >= W ? W : n);
  ap_int_base<W, S> r;
  for (int k = 0; k < r.words; ++k) r.odyssey_words[k] = extract64(tmp, a.words, 64 * k + s, fill);
  r.normalize();
  return r;
}

}  // namespace odyssey_ap

// Comparisons on mathematical values.
#define ODYSSEY_AP_CMP(OP, EXPR)                                                             \
  template <int W1, bool S1, int W2, bool S2>                                                \
  bool operator OP(const ap_int_base<W1, S1>& a, const ap_int_base<W2, S2>& b) {             \
    const odyssey_ap::cmp_t<W1, S1, W2, S2> x(a);                                            \
    const odyssey_ap::cmp_t<W1, S1, W2, S2> y(b);                                            \
    return EXPR;                                                                             \
  }                                                                                          \
  template <int W, bool S, typename I, odyssey_ap::enable_int<I> = 0>                        \
  bool operator OP(const ap_int_base<W, S>& a, I b) {                                        \
    return a OP odyssey_ap::int_base<I>(b);                                                  \
  }                                                                                          \
  template <int W, bool S, typename I, odyssey_ap::enable_int<I> = 0>                        \
  bool operator OP(I a, const ap_int_base<W, S>& b) {                                        \
    return odyssey_ap::int_base<I>(a) OP b;                                                  \
  }

ODYSSEY_AP_CMP(==, !odyssey_ap::compare_less(x, y) && !odyssey_ap::compare_less(y, x))
ODYSSEY_AP_CMP(!=, odyssey_ap::compare_less(x, y) || odyssey_ap::compare_less(y, x))
ODYSSEY_AP_CMP(<, odyssey_ap::compare_less(x, y))
ODYSSEY_AP_CMP(>, odyssey_ap::compare_less(y, x))
ODYSSEY_AP_CMP(<=, !odyssey_ap::compare_less(y, x))
ODYSSEY_AP_CMP(>=, !odyssey_ap::compare_less(x, y))
#undef ODYSSEY_AP_CMP

// Binary arithmetic / logic: both operands are brought to the result type R first.
#define ODYSSEY_AP_BINARY(OP, RW, RS, BODY)                                                  \
  template <int W1, bool S1, int W2, bool S2>                                                \
  ap_int_base<(RW), (RS)> operator OP(const ap_int_base<W1, S1>& a,                          \
                                      const ap_int_base<W2, S2>& b) {                        \
    using R = ap_int_base<(RW), (RS)>;                                                       \
    const R x(a);                                                                            \
    const R y(b);                                                                            \
    BODY                                                                                     \
  }                                                                                          \
  template <int W1, bool S1, typename I, odyssey_ap::enable_int<I> = 0>                      \
  auto operator OP(const ap_int_base<W1, S1>& a, I b) {                                      \
    return a OP odyssey_ap::int_base<I>(b);                                                  \
  }                                                                                          \
  template <int W1, bool S1, typename I, odyssey_ap::enable_int<I> = 0>                      \
  auto operator OP(I a, const ap_int_base<W1, S1>& b) {                                      \
    return odyssey_ap::int_base<I>(a) OP b;                                                  \
  }

#define ODYSSEY_AP_CW odyssey_ap::common_width(W1, S1, W2, S2)

ODYSSEY_AP_BINARY(&, ODYSSEY_AP_CW, S1 || S2, {
  R r;
  for (int k = 0; k < r.words; ++k) r.odyssey_words[k] = x.odyssey_words[k] & y.odyssey_words[k];
  return r;
})
ODYSSEY_AP_BINARY(|, ODYSSEY_AP_CW, S1 || S2, {
  R r;
  for (int k = 0; k < r.words; ++k) r.odyssey_words[k] = x.odyssey_words[k] | y.odyssey_words[k];
  return r;
})
ODYSSEY_AP_BINARY(^, ODYSSEY_AP_CW, S1 || S2, {
  R r;
  for (int k = 0; k < r.words; ++k) r.odyssey_words[k] = x.odyssey_words[k] ^ y.odyssey_words[k];
  return r;
})
ODYSSEY_AP_BINARY(+, ODYSSEY_AP_CW + 1, S1 || S2, { return odyssey_ap::add(x, y); })
ODYSSEY_AP_BINARY(-, ODYSSEY_AP_CW + 1, true, { return odyssey_ap::add(x, odyssey_ap::negate(y)); })
ODYSSEY_AP_BINARY(*, W1 + W2, S1 || S2, {
  R r;
  for (int i = 0; i < r.words; ++i) {
    odyssey_ap::u128 carry = 0;
    for (int j = 0; i + j < r.words; ++j) {
      const odyssey_ap::u128 t = static_cast<odyssey_ap::u128>(x.odyssey_words[i]) *
                                     y.odyssey_words[j] +
                                 r.odyssey_words[i + j] + carry;
      r.odyssey_words[i + j] = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
  }
  r.normalize();
  return r;
})

#undef ODYSSEY_AP_CW
#undef ODYSSEY_AP_BINARY

// Shifts keep the left operand's type; a negative amount shifts the other way.
template <int W, bool S, typename I, odyssey_ap::enable_int<I> = 0>
ap_int_base<W, S> operator<<(const ap_int_base<W, S>& a, I n) {
  const long long s = static_cast<long long>(n);
  return s >= 0 ? odyssey_ap::shift_left(a, s) : odyssey_ap::shift_right(a, -s);
}
template <int W, bool S, typename I, odyssey_ap::enable_int<I> = 0>
ap_int_base<W, S> operator>>(const ap_int_base<W, S>& a, I n) {
  const long long s = static_cast<long long>(n);
  return s >= 0 ? odyssey_ap::shift_right(a, s) : odyssey_ap::shift_left(a, -s);
}
template <int W, bool S, int W2, bool S2>
ap_int_base<W, S> operator<<(const ap_int_base<W, S>& a, const ap_int_base<W2, S2>& n) {
  return a << n.to_int64();
}
template <int W, bool S, int W2, bool S2>
ap_int_base<W, S> operator>>(const ap_int_base<W, S>& a, const ap_int_base<W2, S2>& n) {
  return a >> n.to_int64();
}

template <int W, bool S>
ap_int_base<W, S> operator~(const ap_int_base<W, S>& a) {
  ap_int_base<W, S> r;
  for (int k = 0; k < r.words; ++k) r.odyssey_words[k] = ~a.odyssey_words[k];
  r.normalize();
  return r;
}

template <int W, bool S>
ap_int_base<W + 1, true> operator-(const ap_int_base<W, S>& a) {
  return odyssey_ap::negate(ap_int_base<W + 1, true>(a));
}

template <int W, bool S>
ap_int_base<W, S> operator+(const ap_int_base<W, S>& a) {
  return a;
}

template <int W, bool S>
bool operator!(const ap_int_base<W, S>& a) {
  return a.iszero();
}

#endif  // ODYSSEY_AP_INT_H
