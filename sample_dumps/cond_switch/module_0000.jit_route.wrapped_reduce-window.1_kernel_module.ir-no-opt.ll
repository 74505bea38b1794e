; ModuleID = '__compute_module_wrapped_reduce-window.1_kernel_module'
source_filename = "__compute_module_wrapped_reduce-window.1_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

%XLA_CPU_KernelCallFrame = type { ptr, ptr, i64, ptr }
%XLA_CPU_KernelArg = type { ptr, i64 }
%kernel_dim3 = type { i64, i64, i64 }

; Function Attrs: uwtable
define ptr @wrapped_reduce-window.1(ptr %0) #0 {
  %2 = getelementptr inbounds %XLA_CPU_KernelCallFrame, ptr %0, i32 0, i32 3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 0, i32 0
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !4
  %6 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 1, i32 0
  %7 = load ptr, ptr %6, align 8, !invariant.load !3, !dereferenceable !5
  %8 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 2, i32 0
  %9 = load ptr, ptr %8, align 8, !invariant.load !3, !dereferenceable !6
  %10 = getelementptr inbounds %XLA_CPU_KernelCallFrame, ptr %0, i32 0, i32 1
  %11 = load ptr, ptr %10, align 8
  %12 = getelementptr inbounds %kernel_dim3, ptr %11, i32 0, i32 0
  %13 = load i64, ptr %12, align 4, !invariant.load !3
  %14 = getelementptr inbounds %kernel_dim3, ptr %11, i32 0, i32 1
  %15 = load i64, ptr %14, align 4, !invariant.load !3
  %16 = getelementptr inbounds %kernel_dim3, ptr %11, i32 0, i32 2
  %17 = load i64, ptr %16, align 4, !invariant.load !3
  call void @wrapped_reduce-window.1_wrapped(ptr %5, ptr %7, ptr %9, i64 %13, i64 %15, i64 %17)
  ret ptr null
}

; Function Attrs: alwaysinline
define internal void @wrapped_reduce-window.1_wrapped(ptr noalias align 64 dereferenceable(128) %0, ptr noalias align 64 dereferenceable(4) %1, ptr noalias align 64 dereferenceable(192) %2, i64 %3, i64 %4, i64 %5) #1 {
  %7 = getelementptr inbounds [1 x float], ptr %1, i32 0, i32 0
  %8 = load float, ptr %7, align 4, !invariant.load !3
  br label %9

9:                                                ; preds = %45, %6
  %10 = phi i64 [ %46, %45 ], [ 0, %6 ]
  %11 = icmp slt i64 %10, 16
  br i1 %11, label %12, label %47

12:                                               ; preds = %9
  %13 = mul nsw i64 %10, 3
  br label %14

14:                                               ; preds = %41, %12
  %15 = phi i64 [ %44, %41 ], [ 0, %12 ]
  %16 = icmp slt i64 %15, 3
  br i1 %16, label %17, label %45

17:                                               ; preds = %14
  %18 = icmp eq i64 %15, 2
  br i1 %18, label %19, label %26

19:                                               ; preds = %17
  %20 = mul nsw i64 %10, 2
  %21 = add nsw i64 %20, %15
  %22 = add nsw i64 %21, -2
  %23 = getelementptr inbounds [32 x float], ptr %0, i32 0, i64 %22
  %24 = load float, ptr %23, align 4, !invariant.load !3
  %25 = fadd reassoc float %8, %24
  br label %27

26:                                               ; preds = %17
  br label %27

27:                                               ; preds = %19, %26
  %28 = phi float [ %8, %26 ], [ %25, %19 ]
  br label %29

29:                                               ; preds = %27
  %30 = icmp sge i64 %15, 1
  br i1 %30, label %31, label %38

31:                                               ; preds = %29
  %32 = mul nsw i64 %10, 2
  %33 = add nsw i64 %32, %15
  %34 = add nsw i64 %33, -1
  %35 = getelementptr inbounds [32 x float], ptr %0, i32 0, i64 %34
  %36 = load float, ptr %35, align 4, !invariant.load !3
  %37 = fadd reassoc float %28, %36
  br label %39

38:                                               ; preds = %29
  br label %39

39:                                               ; preds = %31, %38
  %40 = phi float [ %28, %38 ], [ %37, %31 ]
  br label %41

41:                                               ; preds = %39
  %42 = add nsw i64 %13, %15
  %43 = getelementptr inbounds [48 x float], ptr %2, i32 0, i64 %42
  store float %40, ptr %43, align 4
  %44 = add i64 %15, 1
  br label %14

45:                                               ; preds = %14
  %46 = add i64 %10, 1
  br label %9, !llvm.loop !7

47:                                               ; preds = %9
  ret void
}

attributes #0 = { uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { alwaysinline }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 10}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 128}
!5 = !{i64 4}
!6 = !{i64 192}
!7 = distinct !{!7, !8}
!8 = !{!"llvm.loop.unroll.disable"}
