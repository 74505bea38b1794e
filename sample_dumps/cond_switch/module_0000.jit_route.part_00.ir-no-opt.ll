; ModuleID = '__compute_module_part_00'
source_filename = "__compute_module"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

@constant = private unnamed_addr constant [4 x i8] zeroinitializer, align 4
@constant.17 = private unnamed_addr constant [4 x i8] zeroinitializer, align 4
@constant.16 = private unnamed_addr constant [4 x i8] c"\00\00\C0\7F", align 4
@constant.2 = private unnamed_addr constant [4 x i8] c"\FF\FF\FF\7F", align 4

; Function Attrs: denormal_fpenv(preservesign) uwtable
define void @region_5.8(ptr %retval, ptr noalias %run_options, ptr noalias %params, ptr noalias %buffer_table, ptr noalias %status, ptr noalias %prof_counters) #0 {
entry:
  %lt_to.1 = alloca i8, align 1
  %select.1 = alloca i32, align 4
  %xor.1 = alloca i32, align 4
  %compare.1 = alloca i8, align 1
  %select_n.9 = alloca float, align 4
  %select_n.8 = alloca float, align 4
  %eq.3 = alloca i8, align 1
  %ne.5 = alloca i8, align 1
  %select = alloca i32, align 4
  %xor = alloca i32, align 4
  %compare = alloca i8, align 1
  %select_n.7 = alloca float, align 4
  %select_n.6 = alloca float, align 4
  %eq.2 = alloca i8, align 1
  %ne.4 = alloca i8, align 1
  %0 = getelementptr inbounds ptr, ptr %params, i64 0
  %sort.2 = load ptr, ptr %0, align 8, !dereferenceable !2, !align !2
  %1 = load float, ptr %sort.2, align 4, !alias.scope !3, !noalias !6
  %2 = load float, ptr %sort.2, align 4, !alias.scope !3, !noalias !6
  %ne.41 = fcmp une float %1, %2
  %3 = zext i1 %ne.41 to i8
  store i8 %3, ptr %ne.4, align 1, !alias.scope !11, !noalias !12
  %4 = load float, ptr %sort.2, align 4, !alias.scope !3, !noalias !6
  %5 = load float, ptr @constant.17, align 4, !alias.scope !15, !noalias !16
  %eq.22 = fcmp oeq float %4, %5
  %6 = zext i1 %eq.22 to i8
  store i8 %6, ptr %eq.2, align 1, !alias.scope !19, !noalias !20
  %7 = load i8, ptr %eq.2, align 1, !alias.scope !19, !noalias !20
  %8 = load float, ptr @constant.17, align 4, !alias.scope !15, !noalias !16
  %9 = load float, ptr %sort.2, align 4, !alias.scope !3, !noalias !6
  %10 = trunc i8 %7 to i1
  %11 = select i1 %10, float %8, float %9
  store float %11, ptr %select_n.6, align 4, !alias.scope !21, !noalias !22
  %12 = load i8, ptr %ne.4, align 1, !alias.scope !11, !noalias !12
  %13 = load float, ptr @constant.16, align 4, !alias.scope !23, !noalias !24
  %14 = load float, ptr %select_n.6, align 4, !alias.scope !21, !noalias !22
  %15 = trunc i8 %12 to i1
  %16 = select i1 %15, float %13, float %14
  store float %16, ptr %select_n.7, align 4, !alias.scope !27, !noalias !28
  %17 = load i32, ptr %select_n.7, align 4, !alias.scope !27, !noalias !29
  %18 = load i32, ptr @constant, align 4, !alias.scope !35, !noalias !36
  %19 = icmp slt i32 %17, %18
  %20 = zext i1 %19 to i8
  store i8 %20, ptr %compare, align 1, !alias.scope !38, !noalias !39
  %21 = load i32, ptr @constant.2, align 4, !alias.scope !40, !noalias !41
  %22 = load i32, ptr %select_n.7, align 4, !alias.scope !27, !noalias !29
  %23 = xor i32 %21, %22
  store i32 %23, ptr %xor, align 4, !alias.scope !43, !noalias !44
  %24 = load i8, ptr %compare, align 1, !alias.scope !38, !noalias !39
  %25 = load i32, ptr %xor, align 4, !alias.scope !43, !noalias !44
  %26 = load i32, ptr %select_n.7, align 4, !alias.scope !27, !noalias !29
  %27 = trunc i8 %24 to i1
  %28 = select i1 %27, i32 %25, i32 %26
  store i32 %28, ptr %select, align 4, !alias.scope !45, !noalias !46
  %29 = getelementptr inbounds ptr, ptr %params, i64 1
  %sort.3 = load ptr, ptr %29, align 8, !dereferenceable !2, !align !2
  %30 = load float, ptr %sort.3, align 4, !alias.scope !49, !noalias !51
  %31 = load float, ptr %sort.3, align 4, !alias.scope !49, !noalias !51
  %ne.53 = fcmp une float %30, %31
  %32 = zext i1 %ne.53 to i8
  store i8 %32, ptr %ne.5, align 1, !alias.scope !52, !noalias !53
  %33 = load float, ptr %sort.3, align 4, !alias.scope !49, !noalias !51
  %34 = load float, ptr @constant.17, align 4, !alias.scope !15, !noalias !16
  %eq.34 = fcmp oeq float %33, %34
  %35 = zext i1 %eq.34 to i8
  store i8 %35, ptr %eq.3, align 1, !alias.scope !54, !noalias !55
  %36 = load i8, ptr %eq.3, align 1, !alias.scope !54, !noalias !55
  %37 = load float, ptr @constant.17, align 4, !alias.scope !15, !noalias !16
  %38 = load float, ptr %sort.3, align 4, !alias.scope !49, !noalias !51
  %39 = trunc i8 %36 to i1
  %40 = select i1 %39, float %37, float %38
  store float %40, ptr %select_n.8, align 4, !alias.scope !56, !noalias !57
  %41 = load i8, ptr %ne.5, align 1, !alias.scope !52, !noalias !53
  %42 = load float, ptr @constant.16, align 4, !alias.scope !23, !noalias !24
  %43 = load float, ptr %select_n.8, align 4, !alias.scope !56, !noalias !57
  %44 = trunc i8 %41 to i1
  %45 = select i1 %44, float %42, float %43
  store float %45, ptr %select_n.9, align 4, !alias.scope !58, !noalias !59
  %46 = load i32, ptr %select_n.9, align 4, !alias.scope !58, !noalias !60
  %47 = load i32, ptr @constant, align 4, !alias.scope !35, !noalias !36
  %48 = icmp slt i32 %46, %47
  %49 = zext i1 %48 to i8
  store i8 %49, ptr %compare.1, align 1, !alias.scope !61, !noalias !62
  %50 = load i32, ptr @constant.2, align 4, !alias.scope !40, !noalias !41
  %51 = load i32, ptr %select_n.9, align 4, !alias.scope !58, !noalias !60
  %52 = xor i32 %50, %51
  store i32 %52, ptr %xor.1, align 4, !alias.scope !63, !noalias !64
  %53 = load i8, ptr %compare.1, align 1, !alias.scope !61, !noalias !62
  %54 = load i32, ptr %xor.1, align 4, !alias.scope !63, !noalias !64
  %55 = load i32, ptr %select_n.9, align 4, !alias.scope !58, !noalias !60
  %56 = trunc i8 %53 to i1
  %57 = select i1 %56, i32 %54, i32 %55
  store i32 %57, ptr %select.1, align 4, !alias.scope !65, !noalias !66
  %58 = load i32, ptr %select, align 4, !alias.scope !45, !noalias !46
  %59 = load i32, ptr %select.1, align 4, !alias.scope !65, !noalias !66
  %60 = icmp slt i32 %58, %59
  %61 = zext i1 %60 to i8
  store i8 %61, ptr %lt_to.1, align 1, !alias.scope !67, !noalias !68
  %load_ret_value = load i8, ptr %lt_to.1, align 1
  store i8 %load_ret_value, ptr %retval, align 1
  br label %return

return:                                           ; preds = %entry
  ret void
}

attributes #0 = { denormal_fpenv(preservesign) uwtable "frame-pointer"="none" }

!xla_cpu_memory_region_name = !{!0}
!llvm.module.flags = !{!1}

!0 = !{!"ir_emitter"}
!1 = !{i32 1, !"xla_dylib_index", i64 0}
!2 = !{i64 4}
!3 = !{!4}
!4 = !{!"buffer: {index:24, offset:0, size:4}", !5}
!5 = !{!"XLA global AA domain"}
!6 = !{!7, !8, !9, !10}
!7 = !{!"buffer: {index:26, offset:0, size:4}", !5}
!8 = !{!"buffer: {index:27, offset:0, size:4}", !5}
!9 = !{!"buffer: {index:44, offset:0, size:1}", !5}
!10 = !{!"buffer: {index:45, offset:0, size:1}", !5}
!11 = !{!9}
!12 = !{!13, !8, !14}
!13 = !{!"buffer: {index:25, offset:0, size:4}", !5}
!14 = !{!"buffer: {index:28, offset:0, size:4}", !5}
!15 = !{!7}
!16 = !{!17, !8, !18, !10}
!17 = !{!"buffer: {index:6, offset:0, size:1}", !5}
!18 = !{!"buffer: {index:34, offset:0, size:4}", !5}
!19 = !{!10}
!20 = !{!7, !8}
!21 = !{!8}
!22 = !{!13, !7, !14, !9, !10}
!23 = !{!13}
!24 = !{!25, !8, !14, !18, !26, !9}
!25 = !{!"buffer: {index:14, offset:0, size:1}", !5}
!26 = !{!"buffer: {index:35, offset:0, size:4}", !5}
!27 = !{!14}
!28 = !{!13, !8, !9}
!29 = !{!30, !31, !32, !33, !34}
!30 = !{!"buffer: {index:29, offset:0, size:4}", !5}
!31 = !{!"buffer: {index:30, offset:0, size:4}", !5}
!32 = !{!"buffer: {index:31, offset:0, size:4}", !5}
!33 = !{!"buffer: {index:32, offset:0, size:4}", !5}
!34 = !{!"buffer: {index:46, offset:0, size:1}", !5}
!35 = !{!30}
!36 = !{!37, !14, !26, !34}
!37 = !{!"buffer: {index:5, offset:0, size:1}", !5}
!38 = !{!34}
!39 = !{!14, !30, !32, !33}
!40 = !{!31}
!41 = !{!14, !32, !26, !42}
!42 = !{!"buffer: {index:36, offset:0, size:4}", !5}
!43 = !{!32}
!44 = !{!14, !31, !33, !34}
!45 = !{!33}
!46 = !{!47, !14, !32, !48, !34}
!47 = !{!"buffer: {index:4, offset:0, size:1}", !5}
!48 = !{!"buffer: {index:37, offset:0, size:4}", !5}
!49 = !{!50}
!50 = !{!"buffer: {index:33, offset:0, size:4}", !5}
!51 = !{!17, !25, !7, !18}
!52 = !{!25}
!53 = !{!13, !18, !26}
!54 = !{!17}
!55 = !{!7, !18}
!56 = !{!18}
!57 = !{!17, !25, !13, !7, !26}
!58 = !{!26}
!59 = !{!25, !13, !18}
!60 = !{!37, !30, !31, !42, !48}
!61 = !{!37}
!62 = !{!30, !26, !42, !48}
!63 = !{!42}
!64 = !{!37, !31, !26, !48}
!65 = !{!48}
!66 = !{!47, !37, !33, !26, !42}
!67 = !{!47}
!68 = !{!33, !48}
