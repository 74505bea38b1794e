; ModuleID = '__compute_module_wrapped_reduce_kernel_module'
source_filename = "__compute_module_wrapped_reduce_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @wrapped_reduce(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
  %2 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = load ptr, ptr %3, align 8, !invariant.load !3, !dereferenceable !4
  %5 = getelementptr inbounds nuw i8, ptr %3, i64 16
  %6 = load ptr, ptr %5, align 8, !invariant.load !3, !dereferenceable !5
  tail call void @llvm.experimental.noalias.scope.decl(metadata !6)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !9)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !11)
  %7 = load float, ptr %6, align 4, !invariant.load !3, !alias.scope !9, !noalias !13
  br label %.preheader

.preheader:                                       ; preds = %1, %.preheader
  %8 = phi float [ %7, %1 ], [ %105, %.preheader ]
  %9 = phi i64 [ 0, %1 ], [ %106, %.preheader ]
  %.idx = shl i64 %9, 7
  %10 = getelementptr i8, ptr %4, i64 %.idx
  %11 = load float, ptr %10, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %12 = fadd reassoc float %8, %11
  %13 = getelementptr i8, ptr %10, i64 4
  %14 = load float, ptr %13, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %15 = fadd reassoc float %12, %14
  %16 = getelementptr i8, ptr %10, i64 8
  %17 = load float, ptr %16, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %18 = fadd reassoc float %15, %17
  %19 = getelementptr i8, ptr %10, i64 12
  %20 = load float, ptr %19, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %21 = fadd reassoc float %18, %20
  %22 = getelementptr i8, ptr %10, i64 16
  %23 = load float, ptr %22, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %24 = fadd reassoc float %21, %23
  %25 = getelementptr i8, ptr %10, i64 20
  %26 = load float, ptr %25, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %27 = fadd reassoc float %24, %26
  %28 = getelementptr i8, ptr %10, i64 24
  %29 = load float, ptr %28, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %30 = fadd reassoc float %27, %29
  %31 = getelementptr i8, ptr %10, i64 28
  %32 = load float, ptr %31, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %33 = fadd reassoc float %30, %32
  %34 = getelementptr i8, ptr %10, i64 32
  %35 = load float, ptr %34, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %36 = fadd reassoc float %33, %35
  %37 = getelementptr i8, ptr %10, i64 36
  %38 = load float, ptr %37, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %39 = fadd reassoc float %36, %38
  %40 = getelementptr i8, ptr %10, i64 40
  %41 = load float, ptr %40, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %42 = fadd reassoc float %39, %41
  %43 = getelementptr i8, ptr %10, i64 44
  %44 = load float, ptr %43, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %45 = fadd reassoc float %42, %44
  %46 = getelementptr i8, ptr %10, i64 48
  %47 = load float, ptr %46, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %48 = fadd reassoc float %45, %47
  %49 = getelementptr i8, ptr %10, i64 52
  %50 = load float, ptr %49, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %51 = fadd reassoc float %48, %50
  %52 = getelementptr i8, ptr %10, i64 56
  %53 = load float, ptr %52, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %54 = fadd reassoc float %51, %53
  %55 = getelementptr i8, ptr %10, i64 60
  %56 = load float, ptr %55, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %57 = fadd reassoc float %54, %56
  %58 = getelementptr i8, ptr %10, i64 64
  %59 = load float, ptr %58, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %60 = fadd reassoc float %57, %59
  %61 = getelementptr i8, ptr %10, i64 68
  %62 = load float, ptr %61, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %63 = fadd reassoc float %60, %62
  %64 = getelementptr i8, ptr %10, i64 72
  %65 = load float, ptr %64, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %66 = fadd reassoc float %63, %65
  %67 = getelementptr i8, ptr %10, i64 76
  %68 = load float, ptr %67, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %69 = fadd reassoc float %66, %68
  %70 = getelementptr i8, ptr %10, i64 80
  %71 = load float, ptr %70, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %72 = fadd reassoc float %69, %71
  %73 = getelementptr i8, ptr %10, i64 84
  %74 = load float, ptr %73, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %75 = fadd reassoc float %72, %74
  %76 = getelementptr i8, ptr %10, i64 88
  %77 = load float, ptr %76, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %78 = fadd reassoc float %75, %77
  %79 = getelementptr i8, ptr %10, i64 92
  %80 = load float, ptr %79, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %81 = fadd reassoc float %78, %80
  %82 = getelementptr i8, ptr %10, i64 96
  %83 = load float, ptr %82, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %84 = fadd reassoc float %81, %83
  %85 = getelementptr i8, ptr %10, i64 100
  %86 = load float, ptr %85, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %87 = fadd reassoc float %84, %86
  %88 = getelementptr i8, ptr %10, i64 104
  %89 = load float, ptr %88, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %90 = fadd reassoc float %87, %89
  %91 = getelementptr i8, ptr %10, i64 108
  %92 = load float, ptr %91, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %93 = fadd reassoc float %90, %92
  %94 = getelementptr i8, ptr %10, i64 112
  %95 = load float, ptr %94, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %96 = fadd reassoc float %93, %95
  %97 = getelementptr i8, ptr %10, i64 116
  %98 = load float, ptr %97, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %99 = fadd reassoc float %96, %98
  %100 = getelementptr i8, ptr %10, i64 120
  %101 = load float, ptr %100, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %102 = fadd reassoc float %99, %101
  %103 = getelementptr i8, ptr %10, i64 124
  %104 = load float, ptr %103, align 4, !invariant.load !3, !alias.scope !6, !noalias !14
  %105 = fadd reassoc float %102, %104
  %106 = add nuw nsw i64 %9, 1
  %exitcond.not = icmp eq i64 %106, 16
  br i1 %exitcond.not, label %wrapped_reduce_wrapped.exit, label %.preheader, !llvm.loop !15

wrapped_reduce_wrapped.exit:                      ; preds = %.preheader
  %107 = getelementptr inbounds nuw i8, ptr %3, i64 32
  %108 = load ptr, ptr %107, align 8, !invariant.load !3, !dereferenceable !5
  store float %105, ptr %108, align 4, !alias.scope !11, !noalias !17
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 8}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 2048}
!5 = !{i64 4}
!6 = !{!7}
!7 = distinct !{!7, !8, !"wrapped_reduce_wrapped: argument 0"}
!8 = distinct !{!8, !"wrapped_reduce_wrapped"}
!9 = !{!10}
!10 = distinct !{!10, !8, !"wrapped_reduce_wrapped: argument 1"}
!11 = !{!12}
!12 = distinct !{!12, !8, !"wrapped_reduce_wrapped: argument 2"}
!13 = !{!7, !12}
!14 = !{!10, !12}
!15 = distinct !{!15, !16}
!16 = !{!"llvm.loop.unroll.disable"}
!17 = !{!7, !10}
