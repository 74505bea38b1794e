; ModuleID = '__compute_module_slice_bitcast_fusion_kernel_module'
source_filename = "__compute_module_slice_bitcast_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @slice_bitcast_fusion(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
vector.ph:
  %1 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %2 = load ptr, ptr %1, align 8, !invariant.load !3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3, !dereferenceable !4
  %4 = getelementptr inbounds nuw i8, ptr %2, i64 16
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !5
  tail call void @llvm.experimental.noalias.scope.decl(metadata !6)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !9)
  br label %vector.body

vector.body:                                      ; preds = %vector.body, %vector.ph
  %index = phi i64 [ 0, %vector.ph ], [ %index.next, %vector.body ]
  %vec.ind = phi <8 x i64> [ <i64 0, i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7>, %vector.ph ], [ %vec.ind.next, %vector.body ]
  %6 = shl <8 x i64> %vec.ind, splat (i64 7)
  %7 = extractelement <8 x i64> %6, i64 0
  %8 = extractelement <8 x i64> %6, i64 1
  %9 = extractelement <8 x i64> %6, i64 2
  %10 = extractelement <8 x i64> %6, i64 3
  %11 = extractelement <8 x i64> %6, i64 4
  %12 = extractelement <8 x i64> %6, i64 5
  %13 = extractelement <8 x i64> %6, i64 6
  %14 = extractelement <8 x i64> %6, i64 7
  %15 = getelementptr i8, ptr %3, i64 %7
  %16 = getelementptr i8, ptr %3, i64 %8
  %17 = getelementptr i8, ptr %3, i64 %9
  %18 = getelementptr i8, ptr %3, i64 %10
  %19 = getelementptr i8, ptr %3, i64 %11
  %20 = getelementptr i8, ptr %3, i64 %12
  %21 = getelementptr i8, ptr %3, i64 %13
  %22 = getelementptr i8, ptr %3, i64 %14
  %23 = shl i64 %index, 3
  %24 = getelementptr i8, ptr %5, i64 %23
  %25 = getelementptr i8, ptr %15, i64 60
  %26 = getelementptr i8, ptr %16, i64 60
  %27 = getelementptr i8, ptr %17, i64 60
  %28 = getelementptr i8, ptr %18, i64 60
  %29 = getelementptr i8, ptr %19, i64 60
  %30 = getelementptr i8, ptr %20, i64 60
  %31 = getelementptr i8, ptr %21, i64 60
  %32 = getelementptr i8, ptr %22, i64 60
  %33 = load float, ptr %25, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %34 = load float, ptr %26, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %35 = load float, ptr %27, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %36 = load float, ptr %28, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %37 = load float, ptr %29, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %38 = load float, ptr %30, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %39 = load float, ptr %31, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %40 = load float, ptr %32, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %41 = insertelement <8 x float> poison, float %33, i64 0
  %42 = insertelement <8 x float> %41, float %34, i64 1
  %43 = insertelement <8 x float> %42, float %35, i64 2
  %44 = insertelement <8 x float> %43, float %36, i64 3
  %45 = insertelement <8 x float> %44, float %37, i64 4
  %46 = insertelement <8 x float> %45, float %38, i64 5
  %47 = insertelement <8 x float> %46, float %39, i64 6
  %48 = insertelement <8 x float> %47, float %40, i64 7
  %49 = getelementptr i8, ptr %15, i64 124
  %50 = getelementptr i8, ptr %16, i64 124
  %51 = getelementptr i8, ptr %17, i64 124
  %52 = getelementptr i8, ptr %18, i64 124
  %53 = getelementptr i8, ptr %19, i64 124
  %54 = getelementptr i8, ptr %20, i64 124
  %55 = getelementptr i8, ptr %21, i64 124
  %56 = getelementptr i8, ptr %22, i64 124
  %57 = load float, ptr %49, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %58 = load float, ptr %50, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %59 = load float, ptr %51, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %60 = load float, ptr %52, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %61 = load float, ptr %53, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %62 = load float, ptr %54, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %63 = load float, ptr %55, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %64 = load float, ptr %56, align 4, !invariant.load !3, !alias.scope !6, !noalias !9
  %65 = insertelement <8 x float> poison, float %57, i64 0
  %66 = insertelement <8 x float> %65, float %58, i64 1
  %67 = insertelement <8 x float> %66, float %59, i64 2
  %68 = insertelement <8 x float> %67, float %60, i64 3
  %69 = insertelement <8 x float> %68, float %61, i64 4
  %70 = insertelement <8 x float> %69, float %62, i64 5
  %71 = insertelement <8 x float> %70, float %63, i64 6
  %72 = insertelement <8 x float> %71, float %64, i64 7
  %interleaved.vec = shufflevector <8 x float> %48, <8 x float> %72, <16 x i32> <i32 0, i32 8, i32 1, i32 9, i32 2, i32 10, i32 3, i32 11, i32 4, i32 12, i32 5, i32 13, i32 6, i32 14, i32 7, i32 15>
  store <16 x float> %interleaved.vec, ptr %24, align 4, !alias.scope !9, !noalias !6
  %index.next = add nuw i64 %index, 8
  %vec.ind.next = add nuw nsw <8 x i64> %vec.ind, splat (i64 8)
  %73 = icmp eq i64 %index.next, 16
  br i1 %73, label %slice_bitcast_fusion_wrapped.exit, label %vector.body, !llvm.loop !11

slice_bitcast_fusion_wrapped.exit:                ; preds = %vector.body
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 6}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 2048}
!5 = !{i64 128}
!6 = !{!7}
!7 = distinct !{!7, !8, !"slice_bitcast_fusion_wrapped: argument 0"}
!8 = distinct !{!8, !"slice_bitcast_fusion_wrapped"}
!9 = !{!10}
!10 = distinct !{!10, !8, !"slice_bitcast_fusion_wrapped: argument 1"}
!11 = distinct !{!11, !12, !13, !14}
!12 = !{!"llvm.loop.unroll.disable"}
!13 = !{!"llvm.loop.isvectorized", i32 1}
!14 = !{!"llvm.loop.unroll.runtime.disable"}
