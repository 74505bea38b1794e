; ModuleID = '__compute_module_add_divide_fusion_kernel_module'
source_filename = "__compute_module_add_divide_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @add_divide_fusion(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
  %2 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = load ptr, ptr %3, align 8, !invariant.load !3, !dereferenceable !4
  tail call void @llvm.experimental.noalias.scope.decl(metadata !5)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !8)
  br label %.preheader

.preheader:                                       ; preds = %1, %.preheader
  %5 = phi float [ 0.000000e+00, %1 ], [ %134, %.preheader ]
  %6 = phi i64 [ 0, %1 ], [ %135, %.preheader ]
  %.idx = shl i64 %6, 7
  %7 = getelementptr i8, ptr %4, i64 %.idx
  %8 = load float, ptr %7, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %9 = fmul float %8, %8
  %10 = fadd reassoc float %5, %9
  %11 = getelementptr i8, ptr %7, i64 4
  %12 = load float, ptr %11, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %13 = fmul float %12, %12
  %14 = fadd reassoc float %10, %13
  %15 = getelementptr i8, ptr %7, i64 8
  %16 = load float, ptr %15, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %17 = fmul float %16, %16
  %18 = fadd reassoc float %14, %17
  %19 = getelementptr i8, ptr %7, i64 12
  %20 = load float, ptr %19, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %21 = fmul float %20, %20
  %22 = fadd reassoc float %18, %21
  %23 = getelementptr i8, ptr %7, i64 16
  %24 = load float, ptr %23, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %25 = fmul float %24, %24
  %26 = fadd reassoc float %22, %25
  %27 = getelementptr i8, ptr %7, i64 20
  %28 = load float, ptr %27, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %29 = fmul float %28, %28
  %30 = fadd reassoc float %26, %29
  %31 = getelementptr i8, ptr %7, i64 24
  %32 = load float, ptr %31, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %33 = fmul float %32, %32
  %34 = fadd reassoc float %30, %33
  %35 = getelementptr i8, ptr %7, i64 28
  %36 = load float, ptr %35, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %37 = fmul float %36, %36
  %38 = fadd reassoc float %34, %37
  %39 = getelementptr i8, ptr %7, i64 32
  %40 = load float, ptr %39, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %41 = fmul float %40, %40
  %42 = fadd reassoc float %38, %41
  %43 = getelementptr i8, ptr %7, i64 36
  %44 = load float, ptr %43, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %45 = fmul float %44, %44
  %46 = fadd reassoc float %42, %45
  %47 = getelementptr i8, ptr %7, i64 40
  %48 = load float, ptr %47, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %49 = fmul float %48, %48
  %50 = fadd reassoc float %46, %49
  %51 = getelementptr i8, ptr %7, i64 44
  %52 = load float, ptr %51, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %53 = fmul float %52, %52
  %54 = fadd reassoc float %50, %53
  %55 = getelementptr i8, ptr %7, i64 48
  %56 = load float, ptr %55, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %57 = fmul float %56, %56
  %58 = fadd reassoc float %54, %57
  %59 = getelementptr i8, ptr %7, i64 52
  %60 = load float, ptr %59, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %61 = fmul float %60, %60
  %62 = fadd reassoc float %58, %61
  %63 = getelementptr i8, ptr %7, i64 56
  %64 = load float, ptr %63, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %65 = fmul float %64, %64
  %66 = fadd reassoc float %62, %65
  %67 = getelementptr i8, ptr %7, i64 60
  %68 = load float, ptr %67, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %69 = fmul float %68, %68
  %70 = fadd reassoc float %66, %69
  %71 = getelementptr i8, ptr %7, i64 64
  %72 = load float, ptr %71, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %73 = fmul float %72, %72
  %74 = fadd reassoc float %70, %73
  %75 = getelementptr i8, ptr %7, i64 68
  %76 = load float, ptr %75, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %77 = fmul float %76, %76
  %78 = fadd reassoc float %74, %77
  %79 = getelementptr i8, ptr %7, i64 72
  %80 = load float, ptr %79, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %81 = fmul float %80, %80
  %82 = fadd reassoc float %78, %81
  %83 = getelementptr i8, ptr %7, i64 76
  %84 = load float, ptr %83, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %85 = fmul float %84, %84
  %86 = fadd reassoc float %82, %85
  %87 = getelementptr i8, ptr %7, i64 80
  %88 = load float, ptr %87, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %89 = fmul float %88, %88
  %90 = fadd reassoc float %86, %89
  %91 = getelementptr i8, ptr %7, i64 84
  %92 = load float, ptr %91, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %93 = fmul float %92, %92
  %94 = fadd reassoc float %90, %93
  %95 = getelementptr i8, ptr %7, i64 88
  %96 = load float, ptr %95, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %97 = fmul float %96, %96
  %98 = fadd reassoc float %94, %97
  %99 = getelementptr i8, ptr %7, i64 92
  %100 = load float, ptr %99, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %101 = fmul float %100, %100
  %102 = fadd reassoc float %98, %101
  %103 = getelementptr i8, ptr %7, i64 96
  %104 = load float, ptr %103, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %105 = fmul float %104, %104
  %106 = fadd reassoc float %102, %105
  %107 = getelementptr i8, ptr %7, i64 100
  %108 = load float, ptr %107, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %109 = fmul float %108, %108
  %110 = fadd reassoc float %106, %109
  %111 = getelementptr i8, ptr %7, i64 104
  %112 = load float, ptr %111, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %113 = fmul float %112, %112
  %114 = fadd reassoc float %110, %113
  %115 = getelementptr i8, ptr %7, i64 108
  %116 = load float, ptr %115, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %117 = fmul float %116, %116
  %118 = fadd reassoc float %114, %117
  %119 = getelementptr i8, ptr %7, i64 112
  %120 = load float, ptr %119, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %121 = fmul float %120, %120
  %122 = fadd reassoc float %118, %121
  %123 = getelementptr i8, ptr %7, i64 116
  %124 = load float, ptr %123, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %125 = fmul float %124, %124
  %126 = fadd reassoc float %122, %125
  %127 = getelementptr i8, ptr %7, i64 120
  %128 = load float, ptr %127, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %129 = fmul float %128, %128
  %130 = fadd reassoc float %126, %129
  %131 = getelementptr i8, ptr %7, i64 124
  %132 = load float, ptr %131, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %133 = fmul float %132, %132
  %134 = fadd reassoc float %130, %133
  %135 = add nuw nsw i64 %6, 1
  %exitcond.not = icmp eq i64 %135, 16
  br i1 %exitcond.not, label %add_divide_fusion_wrapped.exit, label %.preheader, !llvm.loop !10

add_divide_fusion_wrapped.exit:                   ; preds = %.preheader
  %136 = getelementptr inbounds nuw i8, ptr %3, i64 16
  %137 = load ptr, ptr %136, align 8, !invariant.load !3, !dereferenceable !12
  %138 = tail call float @llvm.sqrt.f32(float %134)
  %139 = fadd float %138, f0x358637BD
  %140 = fdiv float 1.000000e+00, %139
  store float %140, ptr %137, align 4, !alias.scope !8, !noalias !5
  ret ptr null
}

; Function Attrs: mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none)
declare float @llvm.sqrt.f32(float) #1

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #2

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nocreateundeforpoison nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 0}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 2048}
!5 = !{!6}
!6 = distinct !{!6, !7, !"add_divide_fusion_wrapped: argument 0"}
!7 = distinct !{!7, !"add_divide_fusion_wrapped"}
!8 = !{!9}
!9 = distinct !{!9, !7, !"add_divide_fusion_wrapped: argument 1"}
!10 = distinct !{!10, !11}
!11 = !{!"llvm.loop.unroll.disable"}
!12 = !{i64 4}
