// What CuTe prints for layouts and tensors, and the offsets or addresses of their elements
// (host-only; test oracle of verilayout's CuTe text reader, tests/oracles/test_cute_print_oracle.py).
// Each case: a line "CASE <name>", the line CuTe prints, then "VALUES v0 v1 ..." (element i's
// offset, address or coordinate in CuTe's colexicographic order).
#include <cstdint>
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
using namespace cute;

template <class L> void layout_case(char const* name, L const& l) {
  printf("CASE %s\n", name); print(l); printf("\nVALUES");
  for (int i = 0; i < int(size(l)); ++i) printf(" %d", int(l(i)));
  printf("\n");
}

template <class T> void tensor_case(char const* name, T const& t) {
  printf("CASE %s\n", name); print(t); printf("\nVALUES");
  for (int i = 0; i < int(size(t)); ++i) printf(" %lu", (unsigned long)reinterpret_cast<uintptr_t>(&t(i)));
  printf("\n");
}

template <class T> void tmem_case(char const* name, T const& t) {
  printf("CASE %s\n", name); print(t); printf("\nVALUES");
  for (int i = 0; i < int(size(t)); ++i) printf(" %u", (unsigned)(t.data() + t.layout()(i)).addr_);
  printf("\n");
}

template <class L> void coord_case(char const* name, L const& l) {
  printf("CASE %s\n", name); print(l); printf("\nVALUES");
  for (int i = 0; i < int(size(l)); ++i) { printf(" "); print(l(i)); }
  printf("\n");
}

int main() {
  using L8x64 = Layout<Shape<_8, _64>, Stride<_64, _1>>;
  layout_case("composition_sw333", composition(Swizzle<3, 3, 3>{}, L8x64{}));
  layout_case("composition_sw333_dynamic", composition(Swizzle<3, 3, 3>{}, make_layout(make_shape(8, 64), make_stride(64, 1))));
  layout_case("composition_sw233_tile", tile_to_shape(composition(Swizzle<2, 3, 3>{}, Layout<Shape<_8, _32>, Stride<_32, _1>>{}), Shape<_16, _64>{}));
  layout_case("gmma_k_sw128_f16", GMMA::Layout_K_SW128_Atom<half_t>{});
  auto* base = reinterpret_cast<half_t*>(uintptr_t(0x400));
  tensor_case("tensor_swizzle_ptr", make_tensor(make_smem_ptr(base), tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_16, _64>{})));
  tensor_case("tensor_swizzle_ptr_0x480", make_tensor(make_smem_ptr(reinterpret_cast<half_t*>(uintptr_t(0x480))), GMMA::Layout_K_SW64_Atom<half_t>{}));
  tensor_case("tensor_plain_ptr_composed", make_tensor(make_smem_ptr(base), composition(Swizzle<3, 3, 3>{}, L8x64{})));
  tensor_case("tensor_plain_ptr", make_tensor(make_smem_ptr(base), Layout<Shape<_4, _8>, Stride<_8, _1>>{}));
  tensor_case("tensor_gmem_ptr", make_tensor(make_gmem_ptr(reinterpret_cast<float*>(uintptr_t(0x1000))), make_layout(make_shape(4, 8), make_stride(1, 4))));
  tmem_case("tensor_tmem", make_tensor(tmem_ptr<uint32_t>(uint32_t(0x00200010)), Layout<Shape<_4, _8>, Stride<Int<65536>, _1>>{}));
  coord_case("identity_layout", make_identity_layout(Shape<_4, _2>{}));
  coord_case("scaled_basis", make_layout(Shape<_4, _2>{}, make_stride(_2{} * E<1>{}, _1{} * E<0>{})));
  coord_case("scaled_basis_nested", make_layout(make_shape(Shape<_2, _2>{}, _3{}), make_stride(make_stride(E<0>{}, _4{} * E<0>{}), E<1>{})));
  // zipped_divide / tiled_divide (cute/layout.hpp): dynamic and static layouts, static tilers
  auto dyn = make_layout(make_shape(8, 16), make_stride(16, 1));
  auto sta = Layout<Shape<_8, _16>, Stride<_16, _1>>{};
  auto tiler = make_tile(Layout<_2, _1>{}, Layout<_4, _1>{});
  layout_case("zipped_divide_dynamic", zipped_divide(dyn, tiler));
  layout_case("zipped_divide_static", zipped_divide(sta, tiler));
  layout_case("tiled_divide_dynamic", tiled_divide(dyn, tiler));
  layout_case("tiled_divide_static", tiled_divide(sta, tiler));
  layout_case("zipped_divide_shape_tiler", zipped_divide(make_layout(make_shape(8, 16)), make_shape(_2{}, _4{})));
  layout_case("zipped_divide_strided_tiler", zipped_divide(Layout<Shape<_8, _16>>{}, make_tile(Layout<_2, _4>{}, Layout<_4, _2>{})));
  layout_case("tiled_divide_swizzled", tiled_divide(composition(Swizzle<3, 3, 3>{}, Layout<Shape<_16, _64>, Stride<_64, _1>>{}), make_tile(Layout<_8, _1>{}, Layout<_16, _1>{})));
  return 0;
}
