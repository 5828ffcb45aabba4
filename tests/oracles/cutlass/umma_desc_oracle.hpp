// Host-only oracle for verilayout's tcgen05 (sm_100) shared-memory descriptor model.
//
// For a CuTe smem tile built with tile_to_shape(UMMA atom, shape, order), print the layout
// text CuTe prints, then for every tcgen05.mma K-block (256 bits of K) the descriptor that
// cute::UMMA::make_umma_desc<Major> (cute/atom/mma_traits_sm100.hpp) computes on that
// K-block's sub-tile: its raw 64-bit value and its fields, and the sub-tile's offset from the
// tile start in elements (on the host the start address cannot be read: CuTe prints an ERROR
// line and uses 0, so the raw value has start field 0 and the offset is reported instead).
//
// Output lines (stdout):
//   L <id> <layout text>
//   D <id> <k_block> <offset_elements> <lbo_field> <sbo_field> <layout_type> <base_offset>
//     <version> <lbo_mode> <raw value, hex>
#pragma once
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm100.hpp>

namespace vl_umma_oracle {
using namespace cute;

template <class T, UMMA::Major Maj, class Atom, class Shp, class Order>
void run(const char* id) {
  auto layout = tile_to_shape(Atom{}, Shp{}, Order{});
  T* base = nullptr;
  Tensor t = make_tensor(make_smem_ptr(base), layout);
  printf("L %s ", id);
  print(layout);
  printf("\n");
  constexpr int KB = 256 / sizeof_bits<T>::value;
  constexpr int NK = decltype(size<1>(layout))::value / KB;
  for_each(make_int_sequence<NK>{}, [&](auto kb) {
    auto sub = local_tile(t, make_shape(size<0>(layout), Int<KB>{}), make_coord(0, int(kb)));
    UMMA::SmemDescriptor d = UMMA::make_umma_desc<Maj>(sub);
    long off = raw_pointer_cast(sub.data()) - raw_pointer_cast(t.data());
    printf("D %s %d %ld %d %d %d %d %d %d %llx\n", id, int(kb), off,
           int(d.leading_byte_offset_), int(d.stride_byte_offset_), int(d.layout_type_),
           int(d.base_offset_), int(d.version_), int(d.lbo_mode_),
           (unsigned long long)uint64_t(d));
  });
}
}  // namespace vl_umma_oracle
