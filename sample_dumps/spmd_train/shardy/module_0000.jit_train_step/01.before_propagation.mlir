module @jit_train_step attributes {mhlo.cross_program_prefetches = [], mhlo.input_output_alias = [], mhlo.is_dynamic = false, mhlo.num_partitions = 8 : i32, mhlo.use_auto_spmd_partitioning = false} {
  sdy.mesh @mesh = <["data"=4, "model"=2]> {stablehlo.mesh = {axes = [{name = "data", size = 4 : i64}, {name = "model", size = 2 : i64}]}}
  func.func @main(%arg0: tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, %arg1: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, %arg2: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, %arg3: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, %arg4: tensor<16x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}, %arg5: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>}) -> (tensor<32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}]>}, tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}, tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {"model"}]>}, tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"model"}, {}]>}, tensor<f32> {sdy.sharding = #sdy.sharding<@mesh, []>}) {
    %0 = stablehlo.slice %arg4 [15:16, 0:16] : (tensor<16x16xf32>) -> tensor<1x16xf32>
    %1 = stablehlo.slice %arg4 [0:15, 0:16] : (tensor<16x16xf32>) -> tensor<15x16xf32>
    %2 = stablehlo.concatenate %0, %1, dim = 0 : (tensor<1x16xf32>, tensor<15x16xf32>) -> tensor<16x16xf32>
    %3 = sdy.constant dense<5.000000e-01> : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<16x16xf32>
    %5 = stablehlo.multiply %2, %4 : tensor<16x16xf32>
    %6 = stablehlo.add %arg4, %5 : tensor<16x16xf32>
    %7 = stablehlo.dot %6, %arg2, precision = [DEFAULT, DEFAULT] : (tensor<16x16xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
    %8 = stablehlo.reshape %arg0 : (tensor<32xf32>) -> tensor<1x32xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x32xf32>) -> tensor<1x32xf32>
    %10 = stablehlo.reshape %9 : (tensor<1x32xf32>) -> tensor<32xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [1] : (tensor<32xf32>) -> tensor<16x32xf32>
    %12 = stablehlo.add %7, %11 : tensor<16x32xf32>
    %13 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %13, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %15 = stablehlo.broadcast_in_dim %13, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %16 = stablehlo.compare GT, %12, %14 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xi1>
    %17 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.broadcast_in_dim %17, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %19 = stablehlo.maximum %12, %18 : tensor<16x32xf32>
    %20 = sdy.sharding_constraint %19 <@mesh, [{"model"}, {"data"}]> : tensor<16x32xf32>
    %21 = sdy.sharding_constraint %20 <@mesh, [{"data"}, {"model"}]> : tensor<16x32xf32>
    %22 = stablehlo.dot %21, %arg3, precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<32x8xf32>) -> tensor<16x8xf32>
    %23 = stablehlo.reshape %arg1 : (tensor<8xf32>) -> tensor<1x8xf32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %25 = stablehlo.reshape %24 : (tensor<1x8xf32>) -> tensor<8xf32>
    %26 = stablehlo.broadcast_in_dim %25, dims = [1] : (tensor<8xf32>) -> tensor<16x8xf32>
    %27 = stablehlo.add %22, %26 : tensor<16x8xf32>
    %28 = stablehlo.subtract %27, %arg5 : tensor<16x8xf32>
    %29 = sdy.constant dense<2.000000e+00> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %31 = stablehlo.multiply %28, %30 : tensor<16x8xf32>
    %32 = sdy.constant dense<7.812500e-03> : tensor<f32>
    %33 = stablehlo.broadcast_in_dim %32, dims = [] : (tensor<f32>) -> tensor<16x8xf32>
    %34 = stablehlo.multiply %31, %33 : tensor<16x8xf32>
    %35 = stablehlo.dot_general %34, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<32x8xf32>) -> tensor<16x32xf32>
    %36 = sdy.sharding_constraint %35 <@mesh, [{"data"}, {"model"}]> : tensor<16x32xf32>
    %37 = sdy.sharding_constraint %36 <@mesh, [{"model"}, {"data"}]> : tensor<16x32xf32>
    %38 = stablehlo.select %16, %37, %15 : tensor<16x32xi1>, tensor<16x32xf32>
    %39 = sdy.constant dense<0.000000e+00> : tensor<f32>
    %40 = stablehlo.reduce(%38 init: %39) applies stablehlo.add across dimensions = [0] : (tensor<16x32xf32>, tensor<f32>) -> tensor<32xf32>
    %41 = stablehlo.reshape %40 : (tensor<32xf32>) -> tensor<1x32xf32>
    %42 = stablehlo.reduce(%41 init: %39) applies stablehlo.add across dimensions = [0] : (tensor<1x32xf32>, tensor<f32>) -> tensor<32xf32>
    %43 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %44 = stablehlo.broadcast_in_dim %43, dims = [] : (tensor<f32>) -> tensor<32xf32>
    %45 = stablehlo.multiply %42, %44 : tensor<32xf32>
    %46 = stablehlo.subtract %arg0, %45 : tensor<32xf32>
    %47 = stablehlo.reduce(%34 init: %39) applies stablehlo.add across dimensions = [0] : (tensor<16x8xf32>, tensor<f32>) -> tensor<8xf32>
    %48 = stablehlo.reshape %47 : (tensor<8xf32>) -> tensor<1x8xf32>
    %49 = stablehlo.reduce(%48 init: %39) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %50 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %51 = stablehlo.broadcast_in_dim %50, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %52 = stablehlo.multiply %49, %51 : tensor<8xf32>
    %53 = stablehlo.subtract %arg1, %52 : tensor<8xf32>
    %54 = stablehlo.dot_general %38, %6, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x32xf32>, tensor<16x16xf32>) -> tensor<32x16xf32>
    %55 = stablehlo.transpose %54, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,32]{0,1}"} : (tensor<32x16xf32>) -> tensor<16x32xf32>
    %56 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %57 = stablehlo.broadcast_in_dim %56, dims = [] : (tensor<f32>) -> tensor<16x32xf32>
    %58 = stablehlo.multiply %55, %57 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[16,32]{0,1}"} : tensor<16x32xf32>
    %59 = stablehlo.subtract %arg2, %58 : tensor<16x32xf32>
    %60 = stablehlo.dot_general %34, %21, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<16x8xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
    %61 = stablehlo.transpose %60, dims = [1, 0] {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,8]{0,1}"} : (tensor<8x32xf32>) -> tensor<32x8xf32>
    %62 = sdy.constant dense<1.000000e-01> : tensor<f32>
    %63 = stablehlo.broadcast_in_dim %62, dims = [] : (tensor<f32>) -> tensor<32x8xf32>
    %64 = stablehlo.multiply %61, %63 {result_layout = dense<[0, 1]> : tensor<2xindex>, xla_shape = "f32[32,8]{0,1}"} : tensor<32x8xf32>
    %65 = stablehlo.subtract %arg3, %64 : tensor<32x8xf32>
    %66 = stablehlo.multiply %28, %28 : tensor<16x8xf32>
    %67 = stablehlo.reduce(%66 init: %39) applies stablehlo.add across dimensions = [0, 1] : (tensor<16x8xf32>, tensor<f32>) -> tensor<f32>
    %68 = sdy.constant dense<1.280000e+02> : tensor<f32>
    %69 = stablehlo.divide %67, %68 : tensor<f32>
    return %46, %53, %59, %65, %69 : tensor<32xf32>, tensor<8xf32>, tensor<16x32xf32>, tensor<32x8xf32>, tensor<f32>
  }
}
