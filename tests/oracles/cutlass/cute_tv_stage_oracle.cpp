// CuTe's thread-value layouts of tiled copies and MMAs, and the wgmma descriptors CUTLASS computes
// for each stage of a staged (rank-3) shared layout (host-only; test oracle of verilayout's TV-layout
// reader and of --stage, tests/oracles/test_cute_tv_stage_oracle.py).
// TV cases: "TV <name>", the line CuTe prints for the (thread, value) -> tile index layout,
// "TILE M N T" (the tile the index runs over, column-major, and the thread count), "COORDS m,n ..." (the tile coordinate
// of each (thread, value) in CuTe's colexicographic order: thread fastest).
// Stage cases: "STAGE <name>", the printed layout, then per stage s and K-block k:
// "D s k offset_elements lbo sbo layout_type base_offset" (make_gmma_desc on that stage's slice).
#include <cstdio>
#include <cute/tensor.hpp>
#include <cute/atom/copy_atom.hpp>
#include <cute/atom/copy_traits_sm75.hpp>
#include <cute/atom/copy_traits_sm90.hpp>
#include <cute/atom/mma_atom.hpp>
#include <cute/atom/mma_traits_sm80.hpp>
#include <cute/atom/mma_traits_sm90_gmma.hpp>
using namespace cute;

template <class TV, class Tile> void tv_case(char const* name, TV const& tv, Tile const& tile) {
  printf("TV %s\n", name); print(tv); printf("\nTILE %d %d %d\nCOORDS", int(size<0>(tile)), int(size<1>(tile)), int(size<0>(tv)));
  for (int i = 0; i < int(size(tv)); ++i) {
    auto c = idx2crd(int(tv(i)), make_shape(int(size<0>(tile)), int(size<1>(tile))));
    printf(" %d,%d", int(get<0>(c)), int(get<1>(c)));
  }
  printf("\n");
}

template <class TC> void copy_case(char const* name, TC const& tc) {
  auto tile = product_each(shape(typename TC::Tiler_MN{}));
  char buf[128];
  snprintf(buf, sizeof buf, "%s_S", name); tv_case(buf, tc.get_layoutS_TV(), tile);
  snprintf(buf, sizeof buf, "%s_D", name); tv_case(buf, tc.get_layoutD_TV(), tile);
}

template <class T, GMMA::Major Maj, class Atom, class Shp> void stage_case(char const* name) {
  auto layout = tile_to_shape(Atom{}, Shp{});
  T* base = nullptr;
  Tensor t = make_tensor(make_smem_ptr(base), layout);
  printf("STAGE %s\n", name); print(layout); printf("\n");
  constexpr int KB = 256 / sizeof_bits<T>::value;
  constexpr int NK = decltype(size<1>(layout))::value / KB;
  for (int s = 0; s < int(size<2>(layout)); ++s) {
    Tensor ts = t(_, _, s);
    for_each(make_int_sequence<NK>{}, [&](auto kb) {
      auto sub = local_tile(ts, make_shape(size<0>(layout), Int<KB>{}), make_coord(0, int(kb)));
      auto d = GMMA::make_gmma_desc<Maj>(sub);
      long off = raw_pointer_cast(sub.data()) - raw_pointer_cast(t.data());
      printf("D %d %d %ld %d %d %d %d\n", s, int(kb), off, int(d.bitfield.leading_byte_offset_),
             int(d.bitfield.stride_byte_offset_), int(d.bitfield.layout_type_), int(d.bitfield.base_offset_));
    });
  }
}

int main() {
  // tiled copies over one warp and over a 2x2-warp SM80 MMA
  copy_case("ldsm_x4_n_warp", make_tiled_copy(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{},
                                              Layout<Shape<_32, _1>, Stride<_1, _0>>{}, Layout<Shape<_1, _8>>{}));
  copy_case("stsm_x4_n_warp", make_tiled_copy(Copy_Atom<SM90_U32x4_STSM_N, half_t>{},
                                              Layout<Shape<_32, _1>, Stride<_1, _0>>{}, Layout<Shape<_1, _8>>{}));
  auto mma = make_tiled_mma(SM80_16x8x16_F32F16F16F32_TN{}, Layout<Shape<_2, _2, _1>>{});
  copy_case("ldsm_x4_n_mma_A", make_tiled_copy_A(Copy_Atom<SM75_U32x4_LDSM_N, half_t>{}, mma));
  copy_case("ldsm_x2_n_mma_B", make_tiled_copy_B(Copy_Atom<SM75_U32x2_LDSM_N, half_t>{}, mma));
  copy_case("stsm_x2_n_mma_C", make_tiled_copy_C(Copy_Atom<SM90_U32x2_STSM_N, half_t>{}, mma));
  copy_case("ldsm_x2_t_mma_B", make_tiled_copy_B(Copy_Atom<SM75_U16x4_LDSM_T, half_t>{}, mma));
  // staged shared layouts as sm90 collectives declare them (tile_to_shape of a GMMA atom, stage mode last)
  stage_case<half_t, GMMA::Major::K, GMMA::Layout_K_SW128_Atom<half_t>, Shape<_128, _64, _4>>("k_sw128_f16_128x64x4");
  stage_case<half_t, GMMA::Major::K, GMMA::Layout_K_SW64_Atom<half_t>, Shape<_64, _32, _3>>("k_sw64_f16_64x32x3");
  stage_case<half_t, GMMA::Major::MN, GMMA::Layout_MN_SW128_Atom<half_t>, Shape<_64, _64, _2>>("mn_sw128_f16_64x64x2");
  stage_case<tfloat32_t, GMMA::Major::K, GMMA::Layout_K_SW128_Atom<tfloat32_t>, Shape<_64, _32, _2>>("k_sw128_tf32_64x32x2");
  return 0;
}
