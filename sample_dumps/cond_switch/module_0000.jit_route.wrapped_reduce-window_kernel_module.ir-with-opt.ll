; ModuleID = '__compute_module_wrapped_reduce-window_kernel_module'
source_filename = "__compute_module_wrapped_reduce-window_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @wrapped_reduce-window(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
  %2 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = load ptr, ptr %3, align 8, !invariant.load !3, !dereferenceable !4
  %5 = getelementptr inbounds nuw i8, ptr %3, i64 16
  %6 = load ptr, ptr %5, align 8, !invariant.load !3, !dereferenceable !5
  %7 = getelementptr inbounds nuw i8, ptr %3, i64 32
  %8 = load ptr, ptr %7, align 8, !invariant.load !3, !dereferenceable !4
  tail call void @llvm.experimental.noalias.scope.decl(metadata !6)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !9)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !11)
  %9 = load float, ptr %6, align 4, !invariant.load !3, !alias.scope !9, !noalias !13
  br label %10

10:                                               ; preds = %1, %130
  %11 = phi i64 [ 0, %1 ], [ %131, %130 ]
  %12 = shl nuw nsw i64 %11, 5
  br label %13

13:                                               ; preds = %10, %129
  %14 = phi i1 [ true, %10 ], [ false, %129 ]
  %15 = phi i64 [ 0, %10 ], [ 16, %129 ]
  %16 = or disjoint i64 %15, %12
  %17 = getelementptr [4 x i8], ptr %4, i64 %16
  %18 = getelementptr [4 x i8], ptr %8, i64 %16
  br label %.preheader

.preheader:                                       ; preds = %13, %123
  %19 = phi i64 [ 0, %13 ], [ %124, %123 ]
  %20 = getelementptr [4 x i8], ptr %17, i64 %19
  %21 = icmp samesign ugt i64 %19, 14
  br i1 %21, label %.thread, label %26

.thread:                                          ; preds = %.preheader
  %22 = getelementptr i8, ptr %20, i64 -60
  %23 = load float, ptr %22, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %24 = fadd reassoc float %9, %23
  %25 = add nuw nsw i64 %19, 1
  br label %.thread5

26:                                               ; preds = %.preheader
  %27 = add nuw nsw i64 %19, 1
  %28 = icmp eq i64 %19, 14
  br i1 %28, label %.thread5, label %34

.thread5:                                         ; preds = %26, %.thread
  %29 = phi i64 [ %25, %.thread ], [ %27, %26 ]
  %30 = phi float [ %24, %.thread ], [ %9, %26 ]
  %31 = getelementptr i8, ptr %20, i64 -56
  %32 = load float, ptr %31, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %33 = fadd reassoc float %30, %32
  br label %.thread6

34:                                               ; preds = %26
  %35 = icmp samesign ugt i64 %19, 12
  br i1 %35, label %.thread6, label %41

.thread6:                                         ; preds = %34, %.thread5
  %36 = phi float [ %33, %.thread5 ], [ %9, %34 ]
  %37 = phi i64 [ %29, %.thread5 ], [ %27, %34 ]
  %38 = getelementptr i8, ptr %20, i64 -52
  %39 = load float, ptr %38, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %40 = fadd reassoc float %36, %39
  br label %.thread7

41:                                               ; preds = %34
  %42 = icmp eq i64 %19, 12
  br i1 %42, label %.thread7, label %48

.thread7:                                         ; preds = %41, %.thread6
  %43 = phi float [ %40, %.thread6 ], [ %9, %41 ]
  %44 = phi i64 [ %37, %.thread6 ], [ %27, %41 ]
  %45 = getelementptr i8, ptr %20, i64 -48
  %46 = load float, ptr %45, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %47 = fadd reassoc float %43, %46
  br label %.thread8

48:                                               ; preds = %41
  %49 = icmp samesign ugt i64 %19, 10
  br i1 %49, label %.thread8, label %55

.thread8:                                         ; preds = %48, %.thread7
  %50 = phi float [ %47, %.thread7 ], [ %9, %48 ]
  %51 = phi i64 [ %44, %.thread7 ], [ %27, %48 ]
  %52 = getelementptr i8, ptr %20, i64 -44
  %53 = load float, ptr %52, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %54 = fadd reassoc float %50, %53
  br label %.thread9

55:                                               ; preds = %48
  %56 = icmp eq i64 %19, 10
  br i1 %56, label %.thread9, label %62

.thread9:                                         ; preds = %55, %.thread8
  %57 = phi float [ %54, %.thread8 ], [ %9, %55 ]
  %58 = phi i64 [ %51, %.thread8 ], [ %27, %55 ]
  %59 = getelementptr i8, ptr %20, i64 -40
  %60 = load float, ptr %59, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %61 = fadd reassoc float %57, %60
  br label %.thread10

62:                                               ; preds = %55
  %63 = icmp samesign ugt i64 %19, 8
  br i1 %63, label %.thread10, label %69

.thread10:                                        ; preds = %62, %.thread9
  %64 = phi float [ %61, %.thread9 ], [ %9, %62 ]
  %65 = phi i64 [ %58, %.thread9 ], [ %27, %62 ]
  %66 = getelementptr i8, ptr %20, i64 -36
  %67 = load float, ptr %66, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %68 = fadd reassoc float %64, %67
  br label %.thread11

69:                                               ; preds = %62
  %70 = icmp eq i64 %19, 8
  br i1 %70, label %.thread11, label %76

.thread11:                                        ; preds = %69, %.thread10
  %71 = phi float [ %68, %.thread10 ], [ %9, %69 ]
  %72 = phi i64 [ %65, %.thread10 ], [ %27, %69 ]
  %73 = getelementptr i8, ptr %20, i64 -32
  %74 = load float, ptr %73, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %75 = fadd reassoc float %71, %74
  br label %.thread12

76:                                               ; preds = %69
  %77 = icmp samesign ugt i64 %19, 6
  br i1 %77, label %.thread12, label %83

.thread12:                                        ; preds = %76, %.thread11
  %78 = phi float [ %75, %.thread11 ], [ %9, %76 ]
  %79 = phi i64 [ %72, %.thread11 ], [ %27, %76 ]
  %80 = getelementptr i8, ptr %20, i64 -28
  %81 = load float, ptr %80, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %82 = fadd reassoc float %78, %81
  br label %.thread13

83:                                               ; preds = %76
  %84 = icmp eq i64 %19, 6
  br i1 %84, label %.thread13, label %90

.thread13:                                        ; preds = %83, %.thread12
  %85 = phi float [ %82, %.thread12 ], [ %9, %83 ]
  %86 = phi i64 [ %79, %.thread12 ], [ %27, %83 ]
  %87 = getelementptr i8, ptr %20, i64 -24
  %88 = load float, ptr %87, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %89 = fadd reassoc float %85, %88
  br label %.thread14

90:                                               ; preds = %83
  %91 = icmp samesign ugt i64 %19, 4
  br i1 %91, label %.thread14, label %97

.thread14:                                        ; preds = %90, %.thread13
  %92 = phi float [ %89, %.thread13 ], [ %9, %90 ]
  %93 = phi i64 [ %86, %.thread13 ], [ %27, %90 ]
  %94 = getelementptr i8, ptr %20, i64 -20
  %95 = load float, ptr %94, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %96 = fadd reassoc float %92, %95
  br label %.thread15

97:                                               ; preds = %90
  %98 = icmp eq i64 %19, 4
  br i1 %98, label %.thread15, label %104

.thread15:                                        ; preds = %97, %.thread14
  %99 = phi float [ %96, %.thread14 ], [ %9, %97 ]
  %100 = phi i64 [ %93, %.thread14 ], [ %27, %97 ]
  %101 = getelementptr i8, ptr %20, i64 -16
  %102 = load float, ptr %101, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %103 = fadd reassoc float %99, %102
  br label %.thread16

104:                                              ; preds = %97
  %105 = icmp samesign ugt i64 %19, 2
  br i1 %105, label %.thread16, label %111

.thread16:                                        ; preds = %104, %.thread15
  %106 = phi float [ %103, %.thread15 ], [ %9, %104 ]
  %107 = phi i64 [ %100, %.thread15 ], [ %27, %104 ]
  %108 = getelementptr i8, ptr %20, i64 -12
  %109 = load float, ptr %108, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %110 = fadd reassoc float %106, %109
  br label %.thread17

111:                                              ; preds = %104
  switch i64 %19, label %117 [
    i64 2, label %.thread17
    i64 0, label %123
  ]

.thread17:                                        ; preds = %111, %.thread16
  %112 = phi float [ %110, %.thread16 ], [ %9, %111 ]
  %113 = phi i64 [ %107, %.thread16 ], [ %27, %111 ]
  %114 = getelementptr i8, ptr %20, i64 -8
  %115 = load float, ptr %114, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %116 = fadd reassoc float %112, %115
  br label %117

117:                                              ; preds = %111, %.thread17
  %118 = phi float [ %116, %.thread17 ], [ %9, %111 ]
  %119 = phi i64 [ %113, %.thread17 ], [ %27, %111 ]
  %120 = getelementptr i8, ptr %20, i64 -4
  %121 = load float, ptr %120, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %122 = fadd reassoc float %118, %121
  br label %123

123:                                              ; preds = %111, %117
  %124 = phi i64 [ %119, %117 ], [ %27, %111 ]
  %125 = phi float [ %122, %117 ], [ %9, %111 ]
  %126 = load float, ptr %20, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %127 = fadd reassoc float %125, %126
  %128 = getelementptr [4 x i8], ptr %18, i64 %19
  store float %127, ptr %128, align 4, !alias.scope !11, !noalias !15
  %exitcond.not = icmp eq i64 %124, 16
  br i1 %exitcond.not, label %129, label %.preheader, !llvm.loop !16

129:                                              ; preds = %123
  br i1 %14, label %13, label %130, !llvm.loop !16

130:                                              ; preds = %129
  %131 = add nuw nsw i64 %11, 1
  %exitcond3.not = icmp eq i64 %131, 16
  br i1 %exitcond3.not, label %wrapped_reduce-window_wrapped.exit, label %10, !llvm.loop !16

wrapped_reduce-window_wrapped.exit:               ; preds = %130
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 9}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 2048}
!5 = !{i64 4}
!6 = !{!7}
!7 = distinct !{!7, !8, !"wrapped_reduce-window_wrapped: argument 0"}
!8 = distinct !{!8, !"wrapped_reduce-window_wrapped"}
!9 = !{!10}
!10 = distinct !{!10, !8, !"wrapped_reduce-window_wrapped: argument 1"}
!11 = !{!12}
!12 = distinct !{!12, !8, !"wrapped_reduce-window_wrapped: argument 2"}
!13 = !{!7, !12}
!14 = !{!10, !12}
!15 = !{!7, !10}
!16 = distinct !{!16, !17}
!17 = !{!"llvm.loop.unroll.disable"}
