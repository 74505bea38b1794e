; ModuleID = '__compute_module_compare_convert_fusion_kernel_module'
source_filename = "__compute_module_compare_convert_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @compare_convert_fusion(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
  %2 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = getelementptr inbounds nuw i8, ptr %3, i64 16
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !4
  tail call void @llvm.experimental.noalias.scope.decl(metadata !5)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !8)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !10)
  br label %.preheader

.preheader:                                       ; preds = %1, %.preheader
  %6 = phi float [ 0.000000e+00, %1 ], [ %103, %.preheader ]
  %7 = phi i64 [ 0, %1 ], [ %104, %.preheader ]
  %.idx = shl i64 %7, 7
  %8 = getelementptr i8, ptr %5, i64 %.idx
  %9 = load float, ptr %8, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %10 = fadd reassoc float %6, %9
  %11 = getelementptr i8, ptr %8, i64 4
  %12 = load float, ptr %11, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %13 = fadd reassoc float %10, %12
  %14 = getelementptr i8, ptr %8, i64 8
  %15 = load float, ptr %14, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %16 = fadd reassoc float %13, %15
  %17 = getelementptr i8, ptr %8, i64 12
  %18 = load float, ptr %17, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %19 = fadd reassoc float %16, %18
  %20 = getelementptr i8, ptr %8, i64 16
  %21 = load float, ptr %20, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %22 = fadd reassoc float %19, %21
  %23 = getelementptr i8, ptr %8, i64 20
  %24 = load float, ptr %23, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %25 = fadd reassoc float %22, %24
  %26 = getelementptr i8, ptr %8, i64 24
  %27 = load float, ptr %26, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %28 = fadd reassoc float %25, %27
  %29 = getelementptr i8, ptr %8, i64 28
  %30 = load float, ptr %29, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %31 = fadd reassoc float %28, %30
  %32 = getelementptr i8, ptr %8, i64 32
  %33 = load float, ptr %32, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %34 = fadd reassoc float %31, %33
  %35 = getelementptr i8, ptr %8, i64 36
  %36 = load float, ptr %35, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %37 = fadd reassoc float %34, %36
  %38 = getelementptr i8, ptr %8, i64 40
  %39 = load float, ptr %38, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %40 = fadd reassoc float %37, %39
  %41 = getelementptr i8, ptr %8, i64 44
  %42 = load float, ptr %41, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %43 = fadd reassoc float %40, %42
  %44 = getelementptr i8, ptr %8, i64 48
  %45 = load float, ptr %44, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %46 = fadd reassoc float %43, %45
  %47 = getelementptr i8, ptr %8, i64 52
  %48 = load float, ptr %47, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %49 = fadd reassoc float %46, %48
  %50 = getelementptr i8, ptr %8, i64 56
  %51 = load float, ptr %50, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %52 = fadd reassoc float %49, %51
  %53 = getelementptr i8, ptr %8, i64 60
  %54 = load float, ptr %53, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %55 = fadd reassoc float %52, %54
  %56 = getelementptr i8, ptr %8, i64 64
  %57 = load float, ptr %56, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %58 = fadd reassoc float %55, %57
  %59 = getelementptr i8, ptr %8, i64 68
  %60 = load float, ptr %59, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %61 = fadd reassoc float %58, %60
  %62 = getelementptr i8, ptr %8, i64 72
  %63 = load float, ptr %62, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %64 = fadd reassoc float %61, %63
  %65 = getelementptr i8, ptr %8, i64 76
  %66 = load float, ptr %65, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %67 = fadd reassoc float %64, %66
  %68 = getelementptr i8, ptr %8, i64 80
  %69 = load float, ptr %68, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %70 = fadd reassoc float %67, %69
  %71 = getelementptr i8, ptr %8, i64 84
  %72 = load float, ptr %71, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %73 = fadd reassoc float %70, %72
  %74 = getelementptr i8, ptr %8, i64 88
  %75 = load float, ptr %74, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %76 = fadd reassoc float %73, %75
  %77 = getelementptr i8, ptr %8, i64 92
  %78 = load float, ptr %77, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %79 = fadd reassoc float %76, %78
  %80 = getelementptr i8, ptr %8, i64 96
  %81 = load float, ptr %80, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %82 = fadd reassoc float %79, %81
  %83 = getelementptr i8, ptr %8, i64 100
  %84 = load float, ptr %83, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %85 = fadd reassoc float %82, %84
  %86 = getelementptr i8, ptr %8, i64 104
  %87 = load float, ptr %86, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %88 = fadd reassoc float %85, %87
  %89 = getelementptr i8, ptr %8, i64 108
  %90 = load float, ptr %89, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %91 = fadd reassoc float %88, %90
  %92 = getelementptr i8, ptr %8, i64 112
  %93 = load float, ptr %92, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %94 = fadd reassoc float %91, %93
  %95 = getelementptr i8, ptr %8, i64 116
  %96 = load float, ptr %95, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %97 = fadd reassoc float %94, %96
  %98 = getelementptr i8, ptr %8, i64 120
  %99 = load float, ptr %98, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %100 = fadd reassoc float %97, %99
  %101 = getelementptr i8, ptr %8, i64 124
  %102 = load float, ptr %101, align 4, !invariant.load !3, !alias.scope !8, !noalias !12
  %103 = fadd reassoc float %100, %102
  %104 = add nuw nsw i64 %7, 1
  %exitcond.not = icmp eq i64 %104, 16
  br i1 %exitcond.not, label %compare_convert_fusion_wrapped.exit, label %.preheader, !llvm.loop !13

compare_convert_fusion_wrapped.exit:              ; preds = %.preheader
  %105 = getelementptr inbounds nuw i8, ptr %3, i64 32
  %106 = load ptr, ptr %105, align 8, !invariant.load !3, !dereferenceable !15
  %107 = load ptr, ptr %3, align 8, !invariant.load !3, !dereferenceable !15
  %108 = fmul float %103, f0x3B000000
  %109 = load float, ptr %107, align 4, !invariant.load !3, !alias.scope !5, !noalias !16
  %110 = fcmp ogt float %108, %109
  %111 = zext i1 %110 to i32
  store i32 %111, ptr %106, align 4, !alias.scope !10, !noalias !17
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 4}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 2048}
!5 = !{!6}
!6 = distinct !{!6, !7, !"compare_convert_fusion_wrapped: argument 0"}
!7 = distinct !{!7, !"compare_convert_fusion_wrapped"}
!8 = !{!9}
!9 = distinct !{!9, !7, !"compare_convert_fusion_wrapped: argument 1"}
!10 = !{!11}
!11 = distinct !{!11, !7, !"compare_convert_fusion_wrapped: argument 2"}
!12 = !{!6, !11}
!13 = distinct !{!13, !14}
!14 = !{!"llvm.loop.unroll.disable"}
!15 = !{i64 4}
!16 = !{!9, !11}
!17 = !{!6, !9}
