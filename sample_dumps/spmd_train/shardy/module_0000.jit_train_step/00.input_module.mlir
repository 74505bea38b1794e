module @jit_train_step attributes {mhlo.cross_program_prefetches = [], mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22data\22=4, \22model\22=2]>}"}, mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func private @region_0.3(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @region_1.4(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @region_2.5(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @region_3.6(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @region_4.7(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @main(%arg0: tensor<32xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22model\22}]>"}, mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}, %arg1: tensor<8xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{}]>"}, mhlo.sharding = "{replicated}"}, %arg2: tensor<16x32xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22data\22}, {\22model\22}]>"}, mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg3: tensor<32x8xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22model\22}, {}]>"}, mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}, %arg4: tensor<16x16xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22data\22}, {}]>"}, mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}, %arg5: tensor<16x8xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\22data\22}, {}]>"}, mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}) -> (tensor<32xf32> {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}, tensor<8xf32> {mhlo.sharding = "{replicated}"}, tensor<16x32xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, tensor<32x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}, tensor<f32> {mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.slice %arg4 [15:16, 0:16] : (tensor<16x16xf32>) -> tensor<1x16xf32>
    %1 = stablehlo.slice %arg4 [0:15, 0:16] : (tensor<16x16xf32>) -> tensor<15x16xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<1x16xf32>, tensor<15x16xf32>) -> tensor<16x16xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %4 = stablehlo.multiply %2, %3 : tensor<16x16xf32>
    %5 = stablehlo.add %arg4, %4 : tensor<16x16xf32>
    %6 = stablehlo.dot %5, %arg2, precision = [DEFAULT, DEFAULT] : (tensor<16x16xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
    %7 = stablehlo.reshape %arg0 : (tensor<32xf32>) -> tensor<1x32xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] : (tensor<1x32xf32>) -> tensor<1x32xf32>
    %9 = stablehlo.reshape %8 : (tensor<1x32xf32>) -> tensor<32xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [1] : (tensor<32xf32>) -> tensor<16x32xf32>
    %11 = stablehlo.add %6, %10 : tensor<16x32xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %13 = stablehlo.compare GT, %11, %12 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xi1>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %15 = stablehlo.maximum %11, %14 : tensor<16x32xf32>
    %16 = stablehlo.custom_call @Sharding(%15) {backend_config = "", mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22model\22}, {\22data\22}]>]>"}, mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %17 = stablehlo.custom_call @Sharding(%16) {backend_config = "", mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22data\22}, {\22model\22}]>]>"}, mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %18 = stablehlo.dot %17, %arg3, precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
    %19 = stablehlo.reshape %arg1 : (tensor<8xf32>) -> tensor<1x8xf32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %21 = stablehlo.reshape %20 : (tensor<1x8xf32>) -> tensor<8xf32>
    %22 = stablehlo.broadcast_in_dim %21, dims = [1] : (tensor<8xf32>) -> tensor<16x8xf32>
    %23 = stablehlo.add %18, %22 : tensor<16x8xf32>
    %24 = stablehlo.subtract %23, %arg5 : tensor<16x8xf32>
    %cst_2 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %25 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %26 = stablehlo.multiply %24, %25 : tensor<16x8xf32>
    %cst_3 = stablehlo.constant dense<7.812500e-03> : tensor<f32>
    %27 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %28 = stablehlo.multiply %26, %27 : tensor<16x8xf32>
    %29 = stablehlo.dot_general %28, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<32x8xf32>) -> tensor<16x32xf32>
    %30 = stablehlo.custom_call @Sharding(%29) {backend_config = "", mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22data\22}, {\22model\22}]>]>"}, mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %31 = stablehlo.custom_call @Sharding(%30) {backend_config = "", mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22model\22}, {\22data\22}]>]>"}, mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %32 = stablehlo.select %13, %31, %12 : tensor<16x32xi1>, tensor<16x32xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %33 = stablehlo.reduce(%32 init: %cst_4) applies stablehlo.add across dimensions = [0] : (tensor<16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %34 = stablehlo.reshape %33 : (tensor<32xf32>) -> tensor<1x32xf32>
    %35 = stablehlo.reduce(%34 init: %cst_4) applies stablehlo.add across dimensions = [0] : (tensor<1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %cst_5 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %36 = stablehlo.broadcast_in_dim %cst_5, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %37 = stablehlo.multiply %35, %36 : tensor<32xf32>
    %38 = stablehlo.subtract %arg0, %37 : tensor<32xf32>
    %39 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%38) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22model\22}]>]>"}} : (tensor<32xf32>) -> tensor<32xf32>
    %40 = stablehlo.reduce(%28 init: %cst_4) applies stablehlo.add across dimensions = [0] : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
    %41 = stablehlo.reshape %40 : (tensor<8xf32>) -> tensor<1x8xf32>
    %42 = stablehlo.reduce(%41 init: %cst_4) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %cst_6 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_6, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %44 = stablehlo.multiply %42, %43 : tensor<8xf32>
    %45 = stablehlo.subtract %arg1, %44 : tensor<8xf32>
    %46 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%45) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{}]>]>"}} : (tensor<8xf32>) -> tensor<8xf32>
    %47 = stablehlo.dot_general %32, %5, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<16x16xf32>) -> tensor<32x16xf32>
    %48 = stablehlo.transpose %47, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,32]{0,1}"} : (tensor<32x16xf32>) -> tensor<16x32xf32>
    %cst_7 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %50 = stablehlo.multiply %48, %49 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,32]{0,1}"} : tensor<16x32xf32>
    %51 = stablehlo.subtract %arg2, %50 : tensor<16x32xf32>
    %52 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%51) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22data\22}, {\22model\22}]>]>"}} : (tensor<16x32xf32>) -> tensor<16x32xf32>
    %53 = stablehlo.dot_general %28, %17, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %54 = stablehlo.transpose %53, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,8]{0,1}"} : (tensor<8x32xf32>) -> tensor<32x8xf32>
    %cst_8 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %55 = stablehlo.broadcast_in_dim %cst_8, dims = [] : (tensor<f32>) -> tensor<32x8xf32>
    %56 = stablehlo.multiply %54, %55 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,8]{0,1}"} : tensor<32x8xf32>
    %57 = stablehlo.subtract %arg3, %56 : tensor<32x8xf32>
    %58 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%57) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, [{\22model\22}, {}]>]>"}} : (tensor<32x8xf32>) -> tensor<32x8xf32>
    %59 = stablehlo.multiply %24, %24 : tensor<16x8xf32>
    %60 = stablehlo.reduce(%59 init: %cst_4) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x8xf32>, tensor<f32>) -> tensor<f32>
    %cst_9 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %61 = stablehlo.divide %60, %cst_9 : tensor<f32>
    %62 = stablehlo.custom_call @xla.sdy.FuncResultSharding(%61) {backend_config = "", has_side_effect = true, mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding_per_value<[<@mesh, []>]>"}} : (tensor<f32>) -> tensor<f32>
    return %39, %46, %52, %58, %62 : tensor<32xf32>, tensor<8xf32>, tensor<16x32xf32>, tensor<32x8xf32>, tensor<f32>
  }
}
