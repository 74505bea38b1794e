; ModuleID = '__compute_module_broadcast_add_fusion.1_kernel_module'
source_filename = "__compute_module_broadcast_add_fusion.1_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; Function Attrs: nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable
define noalias noundef ptr @broadcast_add_fusion.1(ptr nofree readonly captures(none) %0) local_unnamed_addr #0 {
  %2 = getelementptr inbounds nuw i8, ptr %0, i64 24
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = load ptr, ptr %3, align 8, !invariant.load !3, !dereferenceable !4
  %5 = getelementptr inbounds nuw i8, ptr %3, i64 16
  %6 = load ptr, ptr %5, align 8, !invariant.load !3, !dereferenceable !4
  tail call void @llvm.experimental.noalias.scope.decl(metadata !5)
  tail call void @llvm.experimental.noalias.scope.decl(metadata !8)
  br label %7

7:                                                ; preds = %1, %7
  %8 = phi i64 [ 0, %1 ], [ %201, %7 ]
  %9 = shl nuw nsw i64 %8, 5
  %10 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %9
  %11 = load float, ptr %10, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %12 = fmul float %11, 2.000000e+00
  %13 = fadd float %12, 1.000000e+00
  %14 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %9
  store float %13, ptr %14, align 4, !alias.scope !8, !noalias !5
  %15 = or disjoint i64 %9, 1
  %16 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %15
  %17 = load float, ptr %16, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %18 = fmul float %17, 2.000000e+00
  %19 = fadd float %18, 1.000000e+00
  %20 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %15
  store float %19, ptr %20, align 4, !alias.scope !8, !noalias !5
  %21 = or disjoint i64 %9, 2
  %22 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %21
  %23 = load float, ptr %22, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %24 = fmul float %23, 2.000000e+00
  %25 = fadd float %24, 1.000000e+00
  %26 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %21
  store float %25, ptr %26, align 4, !alias.scope !8, !noalias !5
  %27 = or disjoint i64 %9, 3
  %28 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %27
  %29 = load float, ptr %28, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %30 = fmul float %29, 2.000000e+00
  %31 = fadd float %30, 1.000000e+00
  %32 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %27
  store float %31, ptr %32, align 4, !alias.scope !8, !noalias !5
  %33 = or disjoint i64 %9, 4
  %34 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %33
  %35 = load float, ptr %34, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %36 = fmul float %35, 2.000000e+00
  %37 = fadd float %36, 1.000000e+00
  %38 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %33
  store float %37, ptr %38, align 4, !alias.scope !8, !noalias !5
  %39 = or disjoint i64 %9, 5
  %40 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %39
  %41 = load float, ptr %40, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %42 = fmul float %41, 2.000000e+00
  %43 = fadd float %42, 1.000000e+00
  %44 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %39
  store float %43, ptr %44, align 4, !alias.scope !8, !noalias !5
  %45 = or disjoint i64 %9, 6
  %46 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %45
  %47 = load float, ptr %46, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %48 = fmul float %47, 2.000000e+00
  %49 = fadd float %48, 1.000000e+00
  %50 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %45
  store float %49, ptr %50, align 4, !alias.scope !8, !noalias !5
  %51 = or disjoint i64 %9, 7
  %52 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %51
  %53 = load float, ptr %52, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %54 = fmul float %53, 2.000000e+00
  %55 = fadd float %54, 1.000000e+00
  %56 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %51
  store float %55, ptr %56, align 4, !alias.scope !8, !noalias !5
  %57 = or disjoint i64 %9, 8
  %58 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %57
  %59 = load float, ptr %58, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %60 = fmul float %59, 2.000000e+00
  %61 = fadd float %60, 1.000000e+00
  %62 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %57
  store float %61, ptr %62, align 4, !alias.scope !8, !noalias !5
  %63 = or disjoint i64 %9, 9
  %64 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %63
  %65 = load float, ptr %64, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %66 = fmul float %65, 2.000000e+00
  %67 = fadd float %66, 1.000000e+00
  %68 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %63
  store float %67, ptr %68, align 4, !alias.scope !8, !noalias !5
  %69 = or disjoint i64 %9, 10
  %70 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %69
  %71 = load float, ptr %70, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %72 = fmul float %71, 2.000000e+00
  %73 = fadd float %72, 1.000000e+00
  %74 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %69
  store float %73, ptr %74, align 4, !alias.scope !8, !noalias !5
  %75 = or disjoint i64 %9, 11
  %76 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %75
  %77 = load float, ptr %76, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %78 = fmul float %77, 2.000000e+00
  %79 = fadd float %78, 1.000000e+00
  %80 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %75
  store float %79, ptr %80, align 4, !alias.scope !8, !noalias !5
  %81 = or disjoint i64 %9, 12
  %82 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %81
  %83 = load float, ptr %82, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %84 = fmul float %83, 2.000000e+00
  %85 = fadd float %84, 1.000000e+00
  %86 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %81
  store float %85, ptr %86, align 4, !alias.scope !8, !noalias !5
  %87 = or disjoint i64 %9, 13
  %88 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %87
  %89 = load float, ptr %88, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %90 = fmul float %89, 2.000000e+00
  %91 = fadd float %90, 1.000000e+00
  %92 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %87
  store float %91, ptr %92, align 4, !alias.scope !8, !noalias !5
  %93 = or disjoint i64 %9, 14
  %94 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %93
  %95 = load float, ptr %94, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %96 = fmul float %95, 2.000000e+00
  %97 = fadd float %96, 1.000000e+00
  %98 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %93
  store float %97, ptr %98, align 4, !alias.scope !8, !noalias !5
  %99 = or disjoint i64 %9, 15
  %100 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %99
  %101 = load float, ptr %100, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %102 = fmul float %101, 2.000000e+00
  %103 = fadd float %102, 1.000000e+00
  %104 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %99
  store float %103, ptr %104, align 4, !alias.scope !8, !noalias !5
  %105 = or disjoint i64 %9, 16
  %106 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %105
  %107 = load float, ptr %106, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %108 = fmul float %107, 2.000000e+00
  %109 = fadd float %108, 1.000000e+00
  %110 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %105
  store float %109, ptr %110, align 4, !alias.scope !8, !noalias !5
  %111 = or disjoint i64 %9, 17
  %112 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %111
  %113 = load float, ptr %112, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %114 = fmul float %113, 2.000000e+00
  %115 = fadd float %114, 1.000000e+00
  %116 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %111
  store float %115, ptr %116, align 4, !alias.scope !8, !noalias !5
  %117 = or disjoint i64 %9, 18
  %118 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %117
  %119 = load float, ptr %118, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %120 = fmul float %119, 2.000000e+00
  %121 = fadd float %120, 1.000000e+00
  %122 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %117
  store float %121, ptr %122, align 4, !alias.scope !8, !noalias !5
  %123 = or disjoint i64 %9, 19
  %124 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %123
  %125 = load float, ptr %124, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %126 = fmul float %125, 2.000000e+00
  %127 = fadd float %126, 1.000000e+00
  %128 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %123
  store float %127, ptr %128, align 4, !alias.scope !8, !noalias !5
  %129 = or disjoint i64 %9, 20
  %130 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %129
  %131 = load float, ptr %130, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %132 = fmul float %131, 2.000000e+00
  %133 = fadd float %132, 1.000000e+00
  %134 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %129
  store float %133, ptr %134, align 4, !alias.scope !8, !noalias !5
  %135 = or disjoint i64 %9, 21
  %136 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %135
  %137 = load float, ptr %136, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %138 = fmul float %137, 2.000000e+00
  %139 = fadd float %138, 1.000000e+00
  %140 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %135
  store float %139, ptr %140, align 4, !alias.scope !8, !noalias !5
  %141 = or disjoint i64 %9, 22
  %142 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %141
  %143 = load float, ptr %142, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %144 = fmul float %143, 2.000000e+00
  %145 = fadd float %144, 1.000000e+00
  %146 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %141
  store float %145, ptr %146, align 4, !alias.scope !8, !noalias !5
  %147 = or disjoint i64 %9, 23
  %148 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %147
  %149 = load float, ptr %148, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %150 = fmul float %149, 2.000000e+00
  %151 = fadd float %150, 1.000000e+00
  %152 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %147
  store float %151, ptr %152, align 4, !alias.scope !8, !noalias !5
  %153 = or disjoint i64 %9, 24
  %154 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %153
  %155 = load float, ptr %154, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %156 = fmul float %155, 2.000000e+00
  %157 = fadd float %156, 1.000000e+00
  %158 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %153
  store float %157, ptr %158, align 4, !alias.scope !8, !noalias !5
  %159 = or disjoint i64 %9, 25
  %160 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %159
  %161 = load float, ptr %160, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %162 = fmul float %161, 2.000000e+00
  %163 = fadd float %162, 1.000000e+00
  %164 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %159
  store float %163, ptr %164, align 4, !alias.scope !8, !noalias !5
  %165 = or disjoint i64 %9, 26
  %166 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %165
  %167 = load float, ptr %166, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %168 = fmul float %167, 2.000000e+00
  %169 = fadd float %168, 1.000000e+00
  %170 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %165
  store float %169, ptr %170, align 4, !alias.scope !8, !noalias !5
  %171 = or disjoint i64 %9, 27
  %172 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %171
  %173 = load float, ptr %172, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %174 = fmul float %173, 2.000000e+00
  %175 = fadd float %174, 1.000000e+00
  %176 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %171
  store float %175, ptr %176, align 4, !alias.scope !8, !noalias !5
  %177 = or disjoint i64 %9, 28
  %178 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %177
  %179 = load float, ptr %178, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %180 = fmul float %179, 2.000000e+00
  %181 = fadd float %180, 1.000000e+00
  %182 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %177
  store float %181, ptr %182, align 4, !alias.scope !8, !noalias !5
  %183 = or disjoint i64 %9, 29
  %184 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %183
  %185 = load float, ptr %184, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %186 = fmul float %185, 2.000000e+00
  %187 = fadd float %186, 1.000000e+00
  %188 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %183
  store float %187, ptr %188, align 4, !alias.scope !8, !noalias !5
  %189 = or disjoint i64 %9, 30
  %190 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %189
  %191 = load float, ptr %190, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %192 = fmul float %191, 2.000000e+00
  %193 = fadd float %192, 1.000000e+00
  %194 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %189
  store float %193, ptr %194, align 4, !alias.scope !8, !noalias !5
  %195 = or disjoint i64 %9, 31
  %196 = getelementptr inbounds nuw [4 x i8], ptr %4, i64 %195
  %197 = load float, ptr %196, align 4, !invariant.load !3, !alias.scope !5, !noalias !8
  %198 = fmul float %197, 2.000000e+00
  %199 = fadd float %198, 1.000000e+00
  %200 = getelementptr inbounds nuw [4 x i8], ptr %6, i64 %195
  store float %199, ptr %200, align 4, !alias.scope !8, !noalias !5
  %201 = add nuw nsw i64 %8, 1
  %exitcond.not = icmp eq i64 %201, 16
  br i1 %exitcond.not, label %broadcast_add_fusion.1_wrapped.exit, label %7, !llvm.loop !10

broadcast_add_fusion.1_wrapped.exit:              ; preds = %7
  ret ptr null
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite)
declare void @llvm.experimental.noalias.scope.decl(metadata) #1

attributes #0 = { nofree norecurse nosync nounwind memory(readwrite, target_mem: none) uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn memory(inaccessiblemem: readwrite) }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 2}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 2048}
!5 = !{!6}
!6 = distinct !{!6, !7, !"broadcast_add_fusion.1_wrapped: argument 0"}
!7 = distinct !{!7, !"broadcast_add_fusion.1_wrapped"}
!8 = !{!9}
!9 = distinct !{!9, !7, !"broadcast_add_fusion.1_wrapped: argument 1"}
!10 = distinct !{!10, !11}
!11 = !{!"llvm.loop.unroll.disable"}
