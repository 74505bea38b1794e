module @jit_train_step attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  func.func @main(%arg0: tensor<32xf32> {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}, %arg1: tensor<8xf32> {mhlo.sharding = "{replicated}"}, %arg2: tensor<16x32xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, %arg3: tensor<32x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}, %arg4: tensor<16x16xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}, %arg5: tensor<16x8xf32> {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"}) -> (tensor<32xf32> {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}, tensor<8xf32> {mhlo.sharding = "{replicated}"}, tensor<16x32xf32> {mhlo.sharding = "{devices=[4,2]<=[8]}"}, tensor<32x8xf32> {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"}, tensor<f32> {mhlo.sharding = "{replicated}"}) {
    %0 = stablehlo.slice %arg4 [15:16, 0:16] {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<16x16xf32>) -> tensor<1x16xf32>
    %1 = stablehlo.slice %arg4 [0:15, 0:16] {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<16x16xf32>) -> tensor<15x16xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 0 {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<1x16xf32>, tensor<15x16xf32>) -> tensor<16x16xf32>
    %cst = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %3 = stablehlo.broadcast_in_dim %cst, dims = [] {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<f32>) -> tensor<16x16xf32>
    %4 = stablehlo.multiply %2, %3 {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : tensor<16x16xf32>
    %5 = stablehlo.add %arg4, %4 {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : tensor<16x16xf32>
    %6 = stablehlo.dot %5, %arg2, precision = [DEFAULT, DEFAULT] {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : (tensor<16x16xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
    %7 = stablehlo.reshape %arg0 {mhlo.sharding = "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : (tensor<32xf32>) -> tensor<1x32xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0, 1] {mhlo.sharding = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"} : (tensor<1x32xf32>) -> tensor<1x32xf32>
    %9 = stablehlo.reshape %8 {mhlo.sharding = "{devices=[4,2]<=[8] last_tile_dim_replicate}"} : (tensor<1x32xf32>) -> tensor<32xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [1] {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : (tensor<32xf32>) -> tensor<16x32xf32>
    %11 = stablehlo.add %6, %10 {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : tensor<16x32xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_0, dims = [] {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : (tensor<f32>) -> tensor<16x32xf32>
    %13 = stablehlo.compare GT, %11, %12 {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xi1>
    %14 = stablehlo.maximum %11, %12 {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : tensor<16x32xf32>
    %15 = mhlo.copy %14 {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : tensor<16x32xf32>
    %16 = mhlo.copy %15 {mhlo.sharding = "{devices=[4,2]<=[8]}"} : tensor<16x32xf32>
    %17 = stablehlo.dot %16, %arg3, precision = [DEFAULT, DEFAULT] {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
    %18 = stablehlo.reshape %arg1 : (tensor<8xf32>) -> tensor<1x8xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %20 = stablehlo.reshape %19 : (tensor<1x8xf32>) -> tensor<8xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [1] {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<8xf32>) -> tensor<16x8xf32>
    %22 = stablehlo.add %17, %21 {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : tensor<16x8xf32>
    %23 = stablehlo.subtract %22, %arg5 {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : tensor<16x8xf32>
    %cst_1 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %24 = stablehlo.broadcast_in_dim %cst_1, dims = [] {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<f32>) -> tensor<16x8xf32>
    %25 = stablehlo.multiply %23, %24 {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : tensor<16x8xf32>
    %cst_2 = stablehlo.constant dense<7.812500e-03> : tensor<f32>
    %26 = stablehlo.broadcast_in_dim %cst_2, dims = [] {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : (tensor<f32>) -> tensor<16x8xf32>
    %27 = stablehlo.multiply %25, %26 {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : tensor<16x8xf32>
    %28 = stablehlo.dot_general %27, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<16x8xf32>, tensor<32x8xf32>) -> tensor<16x32xf32>
    %29 = mhlo.copy %28 {mhlo.sharding = "{devices=[4,2]<=[8]}"} : tensor<16x32xf32>
    %30 = mhlo.copy %29 {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : tensor<16x32xf32>
    %31 = stablehlo.select %13, %30, %12 {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : tensor<16x32xi1>, tensor<16x32xf32>
    %32 = stablehlo.reduce(%31 init: %cst_0) applies stablehlo.add across dimensions = [0] {mhlo.sharding = "{devices=[4,2]<=[8] last_tile_dim_replicate}"} : (tensor<16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %33 = stablehlo.reshape %32 {mhlo.sharding = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"} : (tensor<32xf32>) -> tensor<1x32xf32>
    %34 = stablehlo.reduce(%33 init: %cst_0) applies stablehlo.add across dimensions = [0] {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : (tensor<1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %cst_3 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %35 = stablehlo.broadcast_in_dim %cst_3, dims = [] {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : (tensor<f32>) -> tensor<32xf32>
    %36 = stablehlo.multiply %34, %35 {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : tensor<32xf32>
    %37 = stablehlo.subtract %arg0, %36 {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : tensor<32xf32>
    %38 = stablehlo.reduce(%27 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
    %39 = stablehlo.reshape %38 : (tensor<8xf32>) -> tensor<1x8xf32>
    %40 = stablehlo.reduce(%39 init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %41 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %42 = stablehlo.multiply %40, %41 : tensor<8xf32>
    %43 = stablehlo.subtract %arg1, %42 : tensor<8xf32>
    %44 = stablehlo.dot_general %31, %5, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] {mhlo.sharding = "{devices=[2,4]<=[4,2]T(1,0)}"} : (tensor<16x32xf32>, tensor<16x16xf32>) -> tensor<32x16xf32>
    %45 = stablehlo.transpose %44, dims = [1, 0] {mhlo.sharding = "{devices=[4,2]<=[8]}", result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,32]{0,1}"} : (tensor<32x16xf32>) -> tensor<16x32xf32>
    %46 = stablehlo.broadcast_in_dim %cst_3, dims = [] {mhlo.sharding = "{devices=[4,2]<=[8]}"} : (tensor<f32>) -> tensor<16x32xf32>
    %47 = stablehlo.multiply %45, %46 {mhlo.sharding = "{devices=[4,2]<=[8]}", result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,32]{0,1}"} : tensor<16x32xf32>
    %48 = stablehlo.subtract %arg2, %47 {mhlo.sharding = "{devices=[4,2]<=[8]}"} : tensor<16x32xf32>
    %49 = stablehlo.dot_general %27, %16, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] {mhlo.sharding = "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : (tensor<16x8xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %50 = stablehlo.transpose %49, dims = [1, 0] {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}", result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,8]{0,1}"} : (tensor<8x32xf32>) -> tensor<32x8xf32>
    %51 = stablehlo.broadcast_in_dim %cst_3, dims = [] {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : (tensor<f32>) -> tensor<32x8xf32>
    %52 = stablehlo.multiply %50, %51 {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}", result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,8]{0,1}"} : tensor<32x8xf32>
    %53 = stablehlo.subtract %arg3, %52 {mhlo.sharding = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"} : tensor<32x8xf32>
    %54 = stablehlo.multiply %23, %23 {mhlo.sharding = "{devices=[4,1,2]<=[8] last_tile_dim_replicate}"} : tensor<16x8xf32>
    %55 = stablehlo.reduce(%54 init: %cst_0) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x8xf32>, tensor<f32>) -> tensor<f32>
    %cst_4 = stablehlo.constant dense<1.280000e+02> : tensor<f32>
    %56 = stablehlo.divide %55, %cst_4 : tensor<f32>
    return %37, %43, %48, %53, %56 : tensor<32xf32>, tensor<8xf32>, tensor<16x32xf32>, tensor<32x8xf32>, tensor<f32>
  }
}
