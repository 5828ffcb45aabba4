// Host-only oracle for verilayout's wgmma descriptor derivation.
//
// For a CuTe smem tile built with tile_to_shape(GMMA atom, shape, order), print the
// layout text CuTe prints, then for every wgmma K-block (256 bits of K) the
// descriptor fields cute::SM90::GMMA::make_gmma_desc<Major> computes on that
// K-block's sub-tile, and the sub-tile's element offset from the tile start (on the
// host make_gmma_desc cannot read the shared-memory address; it prints an ERROR
// line and uses 0, so the start address is reported as this offset instead).
//
// Output lines (stdout):
//   L <id> <layout text>
//   D <id> <k_block> <offset_elements> <lbo_field> <sbo_field> <layout_type> <base_offset>
#pragma once
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>

namespace vl_oracle {
using namespace cute;

template <class T, GMMA::Major Maj, class Atom, class Shp, class Order>
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
    auto d = GMMA::make_gmma_desc<Maj>(sub);
    long off = raw_pointer_cast(sub.data()) - raw_pointer_cast(t.data());
    printf("D %s %d %ld %d %d %d %d\n", id, int(kb), off,
           int(d.bitfield.leading_byte_offset_), int(d.bitfield.stride_byte_offset_),
           int(d.bitfield.layout_type_), int(d.bitfield.base_offset_));
  });
}
}  // namespace vl_oracle
