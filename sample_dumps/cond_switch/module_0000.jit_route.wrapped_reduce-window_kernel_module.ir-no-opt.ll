; ModuleID = '__compute_module_wrapped_reduce-window_kernel_module'
source_filename = "__compute_module_wrapped_reduce-window_kernel_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

%XLA_CPU_KernelCallFrame = type { ptr, ptr, i64, ptr }
%XLA_CPU_KernelArg = type { ptr, i64 }
%kernel_dim3 = type { i64, i64, i64 }

; Function Attrs: uwtable
define ptr @wrapped_reduce-window(ptr %0) #0 {
  %2 = getelementptr inbounds %XLA_CPU_KernelCallFrame, ptr %0, i32 0, i32 3
  %3 = load ptr, ptr %2, align 8, !invariant.load !3
  %4 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 0, i32 0
  %5 = load ptr, ptr %4, align 8, !invariant.load !3, !dereferenceable !4
  %6 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 1, i32 0
  %7 = load ptr, ptr %6, align 8, !invariant.load !3, !dereferenceable !5
  %8 = getelementptr inbounds %XLA_CPU_KernelArg, ptr %3, i32 2, i32 0
  %9 = load ptr, ptr %8, align 8, !invariant.load !3, !dereferenceable !4
  %10 = getelementptr inbounds %XLA_CPU_KernelCallFrame, ptr %0, i32 0, i32 1
  %11 = load ptr, ptr %10, align 8
  %12 = getelementptr inbounds %kernel_dim3, ptr %11, i32 0, i32 0
  %13 = load i64, ptr %12, align 4, !invariant.load !3
  %14 = getelementptr inbounds %kernel_dim3, ptr %11, i32 0, i32 1
  %15 = load i64, ptr %14, align 4, !invariant.load !3
  %16 = getelementptr inbounds %kernel_dim3, ptr %11, i32 0, i32 2
  %17 = load i64, ptr %16, align 4, !invariant.load !3
  call void @wrapped_reduce-window_wrapped(ptr %5, ptr %7, ptr %9, i64 %13, i64 %15, i64 %17)
  ret ptr null
}

; Function Attrs: alwaysinline
define internal void @wrapped_reduce-window_wrapped(ptr noalias align 64 dereferenceable(2048) %0, ptr noalias align 64 dereferenceable(4) %1, ptr noalias align 64 dereferenceable(2048) %2, i64 %3, i64 %4, i64 %5) #1 {
  %7 = getelementptr inbounds [1 x float], ptr %1, i32 0, i32 0
  %8 = load float, ptr %7, align 4, !invariant.load !3
  br label %9

9:                                                ; preds = %49, %6
  %10 = phi i64 [ %50, %49 ], [ 0, %6 ]
  %11 = icmp slt i64 %10, 16
  br i1 %11, label %12, label %51

12:                                               ; preds = %9
  %13 = mul nsw i64 %10, 32
  br label %14

14:                                               ; preds = %47, %12
  %15 = phi i64 [ %48, %47 ], [ 0, %12 ]
  %16 = icmp slt i64 %15, 2
  br i1 %16, label %17, label %49

17:                                               ; preds = %14
  %18 = mul nsw i64 %15, 16
  %19 = add nsw i64 %13, %18
  br label %20

20:                                               ; preds = %43, %17
  %21 = phi i64 [ %46, %43 ], [ 0, %17 ]
  %22 = icmp slt i64 %21, 16
  br i1 %22, label %23, label %47

23:                                               ; preds = %20
  br label %24

24:                                               ; preds = %41, %23
  %25 = phi i64 [ %42, %41 ], [ 0, %23 ]
  %26 = phi float [ %40, %41 ], [ %8, %23 ]
  %27 = icmp slt i64 %25, 16
  br i1 %27, label %28, label %43

28:                                               ; preds = %24
  %29 = add nsw i64 %21, %25
  %30 = icmp sge i64 %29, 15
  br i1 %30, label %31, label %38

31:                                               ; preds = %28
  %32 = add nsw i64 %19, %21
  %33 = add nsw i64 %32, %25
  %34 = add nsw i64 %33, -15
  %35 = getelementptr inbounds [512 x float], ptr %0, i32 0, i64 %34
  %36 = load float, ptr %35, align 4, !invariant.load !3
  %37 = fadd reassoc float %26, %36
  br label %39

38:                                               ; preds = %28
  br label %39

39:                                               ; preds = %31, %38
  %40 = phi float [ %26, %38 ], [ %37, %31 ]
  br label %41

41:                                               ; preds = %39
  %42 = add i64 %25, 1
  br label %24

43:                                               ; preds = %24
  %44 = add nsw i64 %19, %21
  %45 = getelementptr inbounds [512 x float], ptr %2, i32 0, i64 %44
  store float %26, ptr %45, align 4
  %46 = add i64 %21, 1
  br label %20, !llvm.loop !6

47:                                               ; preds = %20
  %48 = add i64 %15, 1
  br label %14, !llvm.loop !6

49:                                               ; preds = %14
  %50 = add i64 %10, 1
  br label %9, !llvm.loop !6

51:                                               ; preds = %9
  ret void
}

attributes #0 = { uwtable "frame-pointer"="all" "prefer-vector-width"="256" }
attributes #1 = { alwaysinline }

!llvm.module.flags = !{!0, !1}
!xla_cpu_memory_region_name = !{!2}

!0 = !{i32 2, !"Debug Info Version", i32 3}
!1 = !{i32 1, !"xla_dylib_index", i64 9}
!2 = !{!"xla_cpu_emitter__loop_fusion_kernel_emitter__hlo_opcode__fusion"}
!3 = !{}
!4 = !{i64 2048}
!5 = !{i64 4}
!6 = distinct !{!6, !7}
!7 = !{!"llvm.loop.unroll.disable"}
