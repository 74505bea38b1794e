; ModuleID = '__compute_module_multiply_bitcast_fusion_kernel_module'
source_filename = "__compute_module_multiply_bitcast_fusion_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @multiply_bitcast_fusion(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
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
  br label %9

9:                                                ; preds = %1, %9
  %10 = phi i64 [ 0, %1 ], [ %209, %9 ]
  %11 = shl nuw nsw i64 %10, 5
  %.idx = mul nuw nsw i64 %10, 12
  %12 = getelementptr i8, ptr %6, i64 %.idx
  %13 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %11
  %14 = load float, ptr %13, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %15 = load float, ptr %12, align 4, !invariant.load !3, !alias.scope !9, !noalias !14
  %16 = fadd float %14, %15
  %17 = fmul float %16, 3.125000e-02
  %18 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %11
  store float %17, ptr %18, align 4, !alias.scope !11, !noalias !15
  %19 = or disjoint i64 %11, 1
  %20 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %19
  %21 = load float, ptr %20, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %22 = fadd float %21, %15
  %23 = fmul float %22, 3.125000e-02
  %24 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %19
  store float %23, ptr %24, align 4, !alias.scope !11, !noalias !15
  %25 = or disjoint i64 %11, 2
  %26 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %25
  %27 = load float, ptr %26, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %28 = fadd float %27, %15
  %29 = fmul float %28, 3.125000e-02
  %30 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %25
  store float %29, ptr %30, align 4, !alias.scope !11, !noalias !15
  %31 = or disjoint i64 %11, 3
  %32 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %31
  %33 = load float, ptr %32, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %34 = fadd float %33, %15
  %35 = fmul float %34, 3.125000e-02
  %36 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %31
  store float %35, ptr %36, align 4, !alias.scope !11, !noalias !15
  %37 = or disjoint i64 %11, 4
  %38 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %37
  %39 = load float, ptr %38, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %40 = fadd float %39, %15
  %41 = fmul float %40, 3.125000e-02
  %42 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %37
  store float %41, ptr %42, align 4, !alias.scope !11, !noalias !15
  %43 = or disjoint i64 %11, 5
  %44 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %43
  %45 = load float, ptr %44, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %46 = fadd float %45, %15
  %47 = fmul float %46, 3.125000e-02
  %48 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %43
  store float %47, ptr %48, align 4, !alias.scope !11, !noalias !15
  %49 = or disjoint i64 %11, 6
  %50 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %49
  %51 = load float, ptr %50, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %52 = fadd float %51, %15
  %53 = fmul float %52, 3.125000e-02
  %54 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %49
  store float %53, ptr %54, align 4, !alias.scope !11, !noalias !15
  %55 = or disjoint i64 %11, 7
  %56 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %55
  %57 = load float, ptr %56, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %58 = fadd float %57, %15
  %59 = fmul float %58, 3.125000e-02
  %60 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %55
  store float %59, ptr %60, align 4, !alias.scope !11, !noalias !15
  %61 = or disjoint i64 %11, 8
  %62 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %61
  %63 = load float, ptr %62, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %64 = fadd float %63, %15
  %65 = fmul float %64, 3.125000e-02
  %66 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %61
  store float %65, ptr %66, align 4, !alias.scope !11, !noalias !15
  %67 = or disjoint i64 %11, 9
  %68 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %67
  %69 = load float, ptr %68, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %70 = fadd float %69, %15
  %71 = fmul float %70, 3.125000e-02
  %72 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %67
  store float %71, ptr %72, align 4, !alias.scope !11, !noalias !15
  %73 = or disjoint i64 %11, 10
  %74 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %73
  %75 = load float, ptr %74, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %76 = fadd float %75, %15
  %77 = fmul float %76, 3.125000e-02
  %78 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %73
  store float %77, ptr %78, align 4, !alias.scope !11, !noalias !15
  %79 = or disjoint i64 %11, 11
  %80 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %79
  %81 = load float, ptr %80, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %82 = fadd float %81, %15
  %83 = fmul float %82, 3.125000e-02
  %84 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %79
  store float %83, ptr %84, align 4, !alias.scope !11, !noalias !15
  %85 = or disjoint i64 %11, 12
  %86 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %85
  %87 = load float, ptr %86, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %88 = fadd float %87, %15
  %89 = fmul float %88, 3.125000e-02
  %90 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %85
  store float %89, ptr %90, align 4, !alias.scope !11, !noalias !15
  %91 = or disjoint i64 %11, 13
  %92 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %91
  %93 = load float, ptr %92, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %94 = fadd float %93, %15
  %95 = fmul float %94, 3.125000e-02
  %96 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %91
  store float %95, ptr %96, align 4, !alias.scope !11, !noalias !15
  %97 = or disjoint i64 %11, 14
  %98 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %97
  %99 = load float, ptr %98, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %100 = fadd float %99, %15
  %101 = fmul float %100, 3.125000e-02
  %102 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %97
  store float %101, ptr %102, align 4, !alias.scope !11, !noalias !15
  %103 = or disjoint i64 %11, 15
  %104 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %103
  %105 = load float, ptr %104, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %106 = load float, ptr %12, align 4, !invariant.load !3, !alias.scope !9, !noalias !14
  %107 = fadd float %105, %106
  %108 = fmul float %107, 3.125000e-02
  %109 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %103
  store float %108, ptr %109, align 4, !alias.scope !11, !noalias !15
  %110 = or disjoint i64 %11, 16
  %111 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %110
  %112 = load float, ptr %111, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %113 = getelementptr i8, ptr %12, i64 4
  %114 = load float, ptr %113, align 4, !invariant.load !3, !alias.scope !9, !noalias !14
  %115 = fadd float %112, %114
  %116 = fmul float %115, 3.125000e-02
  %117 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %110
  store float %116, ptr %117, align 4, !alias.scope !11, !noalias !15
  %118 = or disjoint i64 %11, 17
  %119 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %118
  %120 = load float, ptr %119, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %121 = fadd float %120, %114
  %122 = fmul float %121, 3.125000e-02
  %123 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %118
  store float %122, ptr %123, align 4, !alias.scope !11, !noalias !15
  %124 = or disjoint i64 %11, 18
  %125 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %124
  %126 = load float, ptr %125, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %127 = fadd float %126, %114
  %128 = fmul float %127, 3.125000e-02
  %129 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %124
  store float %128, ptr %129, align 4, !alias.scope !11, !noalias !15
  %130 = or disjoint i64 %11, 19
  %131 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %130
  %132 = load float, ptr %131, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %133 = fadd float %132, %114
  %134 = fmul float %133, 3.125000e-02
  %135 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %130
  store float %134, ptr %135, align 4, !alias.scope !11, !noalias !15
  %136 = or disjoint i64 %11, 20
  %137 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %136
  %138 = load float, ptr %137, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %139 = fadd float %138, %114
  %140 = fmul float %139, 3.125000e-02
  %141 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %136
  store float %140, ptr %141, align 4, !alias.scope !11, !noalias !15
  %142 = or disjoint i64 %11, 21
  %143 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %142
  %144 = load float, ptr %143, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %145 = fadd float %144, %114
  %146 = fmul float %145, 3.125000e-02
  %147 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %142
  store float %146, ptr %147, align 4, !alias.scope !11, !noalias !15
  %148 = or disjoint i64 %11, 22
  %149 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %148
  %150 = load float, ptr %149, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %151 = fadd float %150, %114
  %152 = fmul float %151, 3.125000e-02
  %153 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %148
  store float %152, ptr %153, align 4, !alias.scope !11, !noalias !15
  %154 = or disjoint i64 %11, 23
  %155 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %154
  %156 = load float, ptr %155, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %157 = fadd float %156, %114
  %158 = fmul float %157, 3.125000e-02
  %159 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %154
  store float %158, ptr %159, align 4, !alias.scope !11, !noalias !15
  %160 = or disjoint i64 %11, 24
  %161 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %160
  %162 = load float, ptr %161, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %163 = fadd float %162, %114
  %164 = fmul float %163, 3.125000e-02
  %165 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %160
  store float %164, ptr %165, align 4, !alias.scope !11, !noalias !15
  %166 = or disjoint i64 %11, 25
  %167 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %166
  %168 = load float, ptr %167, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %169 = fadd float %168, %114
  %170 = fmul float %169, 3.125000e-02
  %171 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %166
  store float %170, ptr %171, align 4, !alias.scope !11, !noalias !15
  %172 = or disjoint i64 %11, 26
  %173 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %172
  %174 = load float, ptr %173, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %175 = fadd float %174, %114
  %176 = fmul float %175, 3.125000e-02
  %177 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %172
  store float %176, ptr %177, align 4, !alias.scope !11, !noalias !15
  %178 = or disjoint i64 %11, 27
  %179 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %178
  %180 = load float, ptr %179, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %181 = fadd float %180, %114
  %182 = fmul float %181, 3.125000e-02
  %183 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %178
  store float %182, ptr %183, align 4, !alias.scope !11, !noalias !15
  %184 = or disjoint i64 %11, 28
  %185 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %184
  %186 = load float, ptr %185, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %187 = fadd float %186, %114
  %188 = fmul float %187, 3.125000e-02
  %189 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %184
  store float %188, ptr %189, align 4, !alias.scope !11, !noalias !15
  %190 = or disjoint i64 %11, 29
  %191 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %190
  %192 = load float, ptr %191, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %193 = fadd float %192, %114
  %194 = fmul float %193, 3.125000e-02
  %195 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %190
  store float %194, ptr %195, align 4, !alias.scope !11, !noalias !15
  %196 = or disjoint i64 %11, 30
  %197 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %196
  %198 = load float, ptr %197, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %199 = fadd float %198, %114
  %200 = fmul float %199, 3.125000e-02
  %201 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %196
  store float %200, ptr %201, align 4, !alias.scope !11, !noalias !15
  %202 = or disjoint i64 %11, 31
  %203 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %202
  %204 = load float, ptr %203, align 4, !invariant.load !3, !alias.scope !6, !noalias !13
  %205 = load float, ptr %113, align 4, !invariant.load !3, !alias.scope !9, !noalias !14
  %206 = fadd float %204, %205
  %207 = fmul float %206, 3.125000e-02
  %208 = getelementptr inbounds nuw [4 x i8], ptr %8, i64 %202
  store float %207, ptr %208, align 4, !alias.scope !11, !noalias !15
  %209 = add nuw nsw i64 %10, 1
  %exitcond.not = icmp eq i64 %209, 16
  br i1 %exitcond.not, label %multiply_bitcast_fusion_wrapped.exit, label %9, !llvm.loop !16

multiply_bitcast_fusion_wrapped.exit:             ; preds = %9
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 5}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 2048}
!5 = !{i64 192}
!6 = !{!7}
!7 = distinct !{!7, !8, !"multiply_bitcast_fusion_wrapped: argument 0"}
!8 = distinct !{!8, !"multiply_bitcast_fusion_wrapped"}
!9 = !{!10}
!10 = distinct !{!10, !8, !"multiply_bitcast_fusion_wrapped: argument 1"}
!11 = !{!12}
!12 = distinct !{!12, !8, !"multiply_bitcast_fusion_wrapped: argument 2"}
!13 = !{!10, !12}
!14 = !{!7, !12}
!15 = !{!7, !10}
!16 = distinct !{!16, !17}
!17 = !{!"llvm.loop.unroll.disable"}
