# reduce-lessons -- `make help` lists the targets.
#
# Every lesson, exercise and solution is found by its file name (never listed
# here): lessons/NN_name/NN_name.cu -> ./lessonNN, exercises/NN_name.cu ->
# ./exerciseNN, solutions/NN_name.cu -> ./solutionNN.
# The recipes and scripts/ use POSIX sh only (Debian's and Ubuntu's /bin/sh is dash).

# The compiler; its toolkit (the folder above its bin/) is the one used, for
# NCCL and cuobjdump too, whatever CUDA_HOME says.
NVCC      ?= nvcc
# GPU architecture(s) to build for: the GPU's own (read from nvidia-smi), 90
# when there is none. Any of: native, sm_90, 9.0, 90, or a list: ARCH="75 90".
ARCH      ?=
N         ?= 2^26
L         ?=
E         ?=
DEBUG     ?= 0
WERROR    ?= 0
BUILDDIR  ?= .
# Where make run / make bench write: runs/ (yours, git-ignored); results/ holds
# the reference runs and is written only when asked: make run RESULTS=results
RESULTS   ?= runs
# A newer CUB/Thrust (CCCL) for sources marked `// uses: cccl` (lessons 14, 15 and some lab programs):
# CCCL_HOME=DIR, where DIR/include/cub/cub.cuh or DIR/include/cccl/cub/cub.cuh
# exists (the second is how the nvidia-cuda-cccl Python package lays it out,
# e.g. CCCL_HOME=.../site-packages/nvidia/cu13). Empty: the toolkit's own.
CCCL_HOME ?=

# Goals that compile nothing themselves check no compiler (make help works anywhere).
NOBUILD_GOALS := help diff profile check hint plot tables clean test
BUILD_GOALS   := $(filter-out $(NOBUILD_GOALS),$(or $(MAKECMDGOALS),all))

# Builds run in parallel, one job per core, unless you gave -j yourself (make -j1: one at a time).
ifneq ($(BUILD_GOALS),)
ifeq ($(MAKELEVEL)$(filter -j% --jobs%,$(MAKEFLAGS)),0)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
endif
endif
# ... but never clean beside a build (make clean all): one goal after the other.
ifneq ($(and $(filter clean,$(MAKECMDGOALS)),$(filter-out clean,$(MAKECMDGOALS))),)
.NOTPARALLEL:
endif

# ---- the compiler and the architecture --------------------------------------
NVCC_PATH := $(shell command -v $(NVCC) 2>/dev/null)
NVSMI     := $(shell command -v nvidia-smi 2>/dev/null)
GPU_CCS    = $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d '. ' | sort -un)
ARCH_FROM := given
ifeq ($(strip $(ARCH)),)
ARCH_IN := $(GPU_CCS)
ARCH_FROM := gpu
ifeq ($(strip $(ARCH_IN)),)
ARCH_IN := 90
ARCH_FROM := default
endif
else ifneq ($(filter native,$(ARCH)),)
ARCH_GPU := $(GPU_CCS)
ARCH_IN := $(patsubst native,$(ARCH_GPU),$(ARCH))
ARCH_NATIVE_FAILED := $(if $(strip $(ARCH_GPU)),,yes)
else
ARCH_IN := $(ARCH)
endif
# sm_90, compute_90, 9.0, 90 -> 90 (90a stays 90a, 100f 100f); anything else -> !word
ARCH_NORM := $(shell for a in $(ARCH_IN); do w=$$(echo "$$a" | sed 's/^sm_//; s/^compute_//; s/\.//g'); \
               case $$w in ([1-9][0-9] | [1-9][0-9][0-9] | [1-9][0-9]a | [1-9][0-9][0-9]a | [1-9][0-9][0-9]f) echo "$$w" ;; (*) echo "!$$a" ;; esac; done)
ARCH_BAD  := $(patsubst !%,%,$(filter !%,$(ARCH_NORM)))
override ARCH := $(filter-out !%,$(ARCH_NORM))

ifneq ($(BUILD_GOALS),)
ifeq ($(NVCC_PATH),)
$(error nvcc not found (NVCC=$(NVCC)): the lessons need the CUDA toolkit 12.4 or newer; put its bin/ on PATH (e.g. /usr/local/cuda/bin) or give NVCC=/path/to/nvcc)
endif
NVCC_VERSION := $(shell $(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1)
NVCC_NEW_ENOUGH := $(shell v="$(NVCC_VERSION)"; [ -n "$$v" ] && { [ "$${v%%.*}" -gt 12 ] || { [ "$${v%%.*}" -eq 12 ] && [ "$$(echo "$$v" | cut -d. -f2)" -ge 4 ]; }; } && echo yes)
ifeq ($(NVCC_VERSION),)
$(warning $(NVCC_PATH) printed no version that could be read; the lessons need CUDA 12.4 or newer)
else ifneq ($(NVCC_NEW_ENOUGH),yes)
$(error found CUDA $(NVCC_VERSION) ($(NVCC_PATH)); the lessons need CUDA 12.4 or newer)
endif
ifeq ($(filter 0 1,$(DEBUG)),)
$(error DEBUG=$(DEBUG): give DEBUG=1 for a device debug build (-G -O0), or leave it out)
endif
ifeq ($(filter 0 1,$(WERROR)),)
$(error WERROR=$(WERROR): give WERROR=1 to make warnings errors, or leave it out)
endif
ifeq ($(ARCH_NATIVE_FAILED),yes)
$(error ARCH=native: no GPU to read the architecture from ($(if $(NVSMI),nvidia-smi lists none,nvidia-smi not found)); name it instead, e.g. ARCH=90)
endif
ifneq ($(ARCH_BAD),)
$(error ARCH=$(ARCH_BAD) is not a GPU architecture: use native, sm_90, 9.0 or 90, or a list such as ARCH="75 90")
endif
# Each architecture must be one this nvcc builds for (90a counts as 90).
NVCC_ARCHS  := $(shell $(NVCC) --list-gpu-arch 2>/dev/null | sed -n 's/^compute_//p' | sort -n)
ARCH_NOTHERE := $(strip $(if $(NVCC_ARCHS),$(foreach a,$(ARCH),$(if $(filter $(patsubst %a,%,$(patsubst %f,%,$(a))),$(NVCC_ARCHS)),,$(a)))))
ifneq ($(ARCH_NOTHERE),)
$(error ARCH=$(strip $(ARCH_NOTHERE)): CUDA $(NVCC_VERSION) ($(NVCC_PATH)) cannot build for $(if $(word 2,$(ARCH_NOTHERE)),these architectures,this architecture); it builds for $(NVCC_ARCHS)$(if $(filter 10% 11% 12%,$(ARCH_NOTHERE)), (Blackwell, 100 and 120, needs CUDA 12.8 or newer)))
endif
ifeq ($(ARCH_FROM)$(MAKELEVEL),default0)
$(info note: $(if $(NVSMI),nvidia-smi lists no GPU,no nvidia-smi on this machine), so this builds for sm_90 (H100, H200); choose another with ARCH=80 or ARCH="75 90")
endif
endif

# ---- libraries --------------------------------------------------------------
# The toolkit is the folder above NVCC's bin/ (links followed); an inherited
# CUDA_HOME that names another one is not used.
TOOLKIT   := $(patsubst %/bin/nvcc,%,$(or $(realpath $(NVCC_PATH)),$(NVCC_PATH)))
# NCCL (lesson 18): found beside the compiler, in the system, or at NCCL_HOME
# (a folder counts where it has both include/nccl.h and the library).
NCCL_HOME ?= $(firstword $(foreach d,$(TOOLKIT) /usr /usr/local,$(if $(and $(wildcard $(d)/include/nccl.h),$(wildcard $(d)/lib64/libnccl.so* $(d)/lib/libnccl.so* $(d)/lib/*/libnccl.so*)),$(d))))
# (no -I/-L for places the compiler searches anyway: an explicit -I/usr/include breaks C++ headers)
NCCL_FLAGS := $(if $(filter-out /usr /usr/local $(TOOLKIT),$(NCCL_HOME)),-I$(NCCL_HOME)/include -L$(NCCL_HOME)/lib64 -L$(NCCL_HOME)/lib)
# A newer CCCL goes first on the include path, so that its CUB wins over the toolkit's.
CCCL_INC   := $(if $(strip $(CCCL_HOME)),$(patsubst %/cub/cub.cuh,%,$(firstword $(wildcard $(CCCL_HOME)/include/cccl/cub/cub.cuh $(CCCL_HOME)/include/cub/cub.cuh))))
CCCL_FOUND := $(CCCL_INC)
# A CCCL_HOME with no CUB in it is a mistake, not a request for the toolkit's CUB;
# so is a NCCL_HOME you give without include/nccl.h.
ifneq ($(BUILD_GOALS),)
ifneq ($(and $(filter command line environment,$(origin NCCL_HOME)),$(strip $(NCCL_HOME))),)
ifeq ($(wildcard $(NCCL_HOME)/include/nccl.h),)
$(error NCCL_HOME=$(NCCL_HOME) holds no include/nccl.h: point it at an NCCL folder (include/ and lib/), or leave it out to use the one beside nvcc or in /usr)
endif
endif
ifneq ($(and $(strip $(CCCL_HOME)),$(if $(CCCL_INC),,missing)),)
$(error CCCL_HOME=$(CCCL_HOME) holds neither include/cub/cub.cuh nor include/cccl/cub/cub.cuh: point it at a CCCL folder (the nvidia-cuda-cccl package's nvidia/cu13) or leave it empty for the toolkit's CUB)
endif
endif
cccl_flags  = $(if $(CCCL_FOUND),$(if $(shell grep -l '// uses: cccl' $(1) 2>/dev/null),-I$(CCCL_INC) -DREDUCE_HAVE_CCCL_HOME=1))
CUOBJDUMP  ?= $(or $(wildcard $(TOOLKIT)/bin/cuobjdump),$(shell command -v cuobjdump 2>/dev/null))

# ---- flags ------------------------------------------------------------------
LAST_ARCH := $(lastword $(ARCH))
# Machine code for every ARCH, plus PTX for the last one (the ptx test tier reads it).
GENCODE  := $(foreach a,$(ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
            -gencode arch=compute_$(LAST_ARCH),code=compute_$(LAST_ARCH)
BASEFLAGS := -std=c++17 -Icommon -Xcompiler -Wall,-Wextra
ifeq ($(DEBUG),1)
BASEFLAGS += -G -O0
else
BASEFLAGS += -O3 -lineinfo
endif
ifeq ($(WERROR),1)
BASEFLAGS += -Werror all-warnings
endif
BASEFLAGS += $(EXTRA)
NVFLAGS  := $(BASEFLAGS) $(GENCODE)

# ---- the build follows the flags ---------------------------------------------
# One stamp per BUILDDIR and kind of flag, holding the flags it was last built
# with and rewritten only when they change: every binary and listing depends on
# .build-flags-nvcc (the compiler, ARCH, DEBUG, WERROR, EXTRA), a source marked
# `// uses: cccl` on .build-flags-cccl (CCCL_HOME) and one that links NCCL on
# .build-flags-nccl (NCCL_HOME). So `make ARCH=86 lesson04` after a build for
# sm_90 builds lesson04 again. make -n and -q write no stamp: they count one
# that differs as changed.
STAMP       = $(if $(filter .,$(BUILDDIR)),,$(BUILDDIR)/).build-flags-$(1)
FLAGS_nvcc := $(NVCC_PATH) $(NVCC_VERSION) $(NVFLAGS)
FLAGS_cccl := $(CCCL_INC)
FLAGS_nccl := $(NCCL_HOME) $(NCCL_FLAGS)
STAMP_DRY  := $(findstring n,$(firstword -$(MAKEFLAGS)))$(findstring q,$(firstword -$(MAKEFLAGS)))
define stamp_check
ifneq ($$(wildcard $$(call STAMP,$(1)))x$$(FLAGS_$(1)),$$(call STAMP,$(1))x$$(file <$$(call STAMP,$(1))))
ifeq ($$(STAMP_DRY),)
$$(shell mkdir -p $$(BUILDDIR))
$$(file >$$(call STAMP,$(1)),$$(FLAGS_$(1)))
else
$$(call STAMP,$(1)): .FORCE_STAMP
endif
endif
$$(call STAMP,$(1)): ;
endef
ifneq ($(BUILD_GOALS),)
$(foreach k,nvcc cccl nccl,$(eval $(call stamp_check,$(k))))
endif
.FORCE_STAMP:
stamps = $(call STAMP,nvcc) $(if $(filter $(1),$(CCCL_SRCS)),$(call STAMP,cccl)) $(if $(filter $(1),$(NCCL_SRCS)),$(call STAMP,nccl))

LESSON_SRCS   := $(sort $(wildcard lessons/[0-9][0-9]_*/[0-9][0-9]_*.cu))
EXERCISE_SRCS := $(sort $(wildcard exercises/[0-9][0-9]_*.cu))
SOLUTION_SRCS := $(sort $(wildcard solutions/[0-9][0-9]_*.cu))
LAB_SRCS      := $(sort $(wildcard lab/[0-9][0-9]_*.cu))
HEADERS       := $(wildcard common/*.h)
# The sources marked `// uses: cccl`, and those that link NCCL.
CCCL_SRCS     := $(shell grep -l '// uses: cccl' $(LESSON_SRCS) $(EXERCISE_SRCS) $(SOLUTION_SRCS) $(LAB_SRCS) /dev/null)
NCCL_SRCS     := $(shell grep -l '// link: .*-lnccl' $(LESSON_SRCS) $(EXERCISE_SRCS) $(SOLUTION_SRCS) $(LAB_SRCS) /dev/null)

num   = $(firstword $(subst _, ,$(notdir $(1))))
out   = $(if $(filter .,$(BUILDDIR)),$(1),$(BUILDDIR)/$(1))
# Libraries a source asks for, from its line `// link: -lfoo`.
links = $(shell sed -n 's|^.*// link: ||p' $(1))

LESSONS   := $(foreach s,$(LESSON_SRCS),lesson$(call num,$(s)))
EXERCISES := $(foreach s,$(EXERCISE_SRCS),exercise$(call num,$(s)))
SOLUTIONS := $(foreach s,$(SOLUTION_SRCS),solution$(call num,$(s)))
# The lab's probes (lab/NN_topic.cu -> ./lab_NN_topic): the experiments behind the lessons' choices.
LABS      := $(foreach s,$(LAB_SRCS),lab_$(basename $(notdir $(s))))
BINARIES  := $(LESSONS) $(EXERCISES) $(SOLUTIONS) $(LABS)
LISTINGS  := $(foreach b,$(BINARIES),$(b).ptx $(b).sass)

.PHONY: all lessons exercises solutions lab run bench plot profile diff check hint tables test clean help \
        $(if $(filter .,$(BUILDDIR)),,$(BINARIES) $(LISTINGS))

all: $(foreach b,$(BINARIES),$(call out,$(b)))
lessons:   $(foreach b,$(LESSONS),$(call out,$(b)))
exercises: $(foreach b,$(EXERCISES),$(call out,$(b)))
solutions: $(foreach b,$(SOLUTIONS),$(call out,$(b)))
lab:       $(foreach b,$(LABS),$(call out,$(b)))

# One rule per binary, and its PTX and SASS listings. A source that links NCCL
# is skipped, with a message, when NCCL is not installed: the rest goes on.
define binary_rule
$(call out,$(1)): $(2) $(HEADERS) $(call stamps,$(2))
ifneq ($(and $(findstring -lnccl,$(call links,$(2))),$(if $(NCCL_HOME),,none)),)
	@echo "$(1): skipped: NCCL not found (install it or set NCCL_HOME)"
else
	@mkdir -p $$(@D)
	$$(NVCC) $(call cccl_flags,$(2)) $$(NVFLAGS) $(if $(findstring -lnccl,$(call links,$(2))),$$(NCCL_FLAGS)) -o $$@ $(2) $(call links,$(2))
endif
$(call out,$(1)).ptx: $(2) $(HEADERS) $(call stamps,$(2))
	@mkdir -p $$(@D)
	$$(NVCC) $(call cccl_flags,$(2)) $$(BASEFLAGS) $(if $(findstring -lnccl,$(call links,$(2))),$$(NCCL_FLAGS)) -arch=sm_$$(LAST_ARCH) -ptx -o $$@ $(2)
	@sh scripts/listing.sh ptx $(2) $$@ sm_$$(LAST_ARCH)
$(call out,$(1)).sass: $(if $(CUOBJDUMP),$(call out,$(1)))
	@CUOBJDUMP="$$(CUOBJDUMP)" sh scripts/listing.sh sass $(1) $(call out,$(1)) $$@ "$$(ARCH)"
ifneq ($(BUILDDIR),.)
$(1): $(call out,$(1))
$(1).ptx: $(call out,$(1)).ptx
$(1).sass: $(call out,$(1)).sass
endif
endef
$(foreach s,$(LESSON_SRCS),$(eval $(call binary_rule,lesson$(call num,$(s)),$(s))))
$(foreach s,$(EXERCISE_SRCS),$(eval $(call binary_rule,exercise$(call num,$(s)),$(s))))
$(foreach s,$(SOLUTION_SRCS),$(eval $(call binary_rule,solution$(call num,$(s)),$(s))))
$(foreach s,$(LAB_SRCS),$(eval $(call binary_rule,lab_$(basename $(notdir $(s))),$(s))))

# One digit is enough: make lesson4 is make lesson04 (exercise4, solution4, lesson4.ptx, ...).
short   = $(patsubst lesson0%,lesson%,$(patsubst exercise0%,exercise%,$(patsubst solution0%,solution%,$(1))))
ALIASED := $(foreach b,$(LESSONS) $(EXERCISES) $(SOLUTIONS),$(if $(filter-out $(b),$(call short,$(b))),$(b)))
shown   = $(if $(filter /%,$(1)),$(1),./$(1))
define alias_rule
.PHONY: $(call short,$(1)) $(call short,$(1)).ptx $(call short,$(1)).sass
$(call short,$(1)): $(1)
	@echo "($(call short,$(1)) is $(1): $(call shown,$(call out,$(1))))"
$(call short,$(1)).ptx: $(1).ptx
$(call short,$(1)).sass: $(1).sass
endef
$(foreach b,$(ALIASED),$(eval $(call alias_rule,$(b))))

# ---- running ----------------------------------------------------------------
# Every lesson in order (lesson 01 at its own, smaller default n; the others at
# N): the staircase, in $(RESULTS)/run-<gpu>.csv and .txt.
# The first lesson is built and asked first (is N a size, is there a GPU), then the rest.
run: $(call out,$(firstword $(LESSONS)))
	@BIN="$(BUILDDIR)" sh scripts/run.sh --preflight "$(N)" $(firstword $(LESSONS))
	@$(MAKE) --no-print-directory lessons
	@NCCL_NVLS_ENABLE=0 BIN="$(BUILDDIR)" OUT="$(RESULTS)" sh scripts/run.sh "$(N)" $(LESSONS)

# Size sweep 2^10..2^30 of lessons 09-15, L2 flushed both ways (dirty, clean):
# $(RESULTS)/bench-<gpu>.csv and bench-<gpu>-clean.csv, and their charts.
# Which lessons: those marked bench=yes in lessons/manifest.txt.
BENCH_LESSONS = $(filter $(foreach l,$(shell awk -F'\t' '$$1 ~ /^[0-9][0-9]$$/ && $$6 == "yes" { print $$1 }' lessons/manifest.txt),lesson$(l)),$(LESSONS))
bench: lessons
	@BIN="$(BUILDDIR)" OUT="$(RESULTS)" sh scripts/bench.sh $(BENCH_LESSONS)

# SVG charts of the CSVs in results/ and runs/ (POSIX sh and awk only).
plot:
	@sh scripts/plot.sh results runs

# The Nsight Compute counters the notes quote, every kernel of the process,
# for one lesson: make profile L=04 (runs ./lesson04 -n 2^24 --check; N=... overrides).
PROFILE_METRICS := gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed_op_branch.sum,sm__sass_inst_executed_op_shared_ld.sum,sm__sass_inst_executed_op_shared_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,lts__t_requests_op_red.sum,lts__t_requests_op_atom.sum
PROFILE_N := $(if $(filter file default undefined,$(origin N)),,$(N))
# (named through MAKE_CMD, not MAKE: make -n must not run ncu)
MAKE_CMD = $(MAKE)
profile:
	@METRICS="$(PROFILE_METRICS)" BIN="$(BUILDDIR)" MAKE="$(MAKE_CMD)" EXTRA="$(EXTRA)" sh scripts/profile.sh "$(L)" "$(PROFILE_N)"

# What lesson NN changes in the lesson it builds on (lessons/manifest.txt): make diff L=05
diff:
	@sh scripts/diff.sh "$(L)"

# Your exercise through the whole test matrix: make check E=04
check:
	@e=$$(. scripts/common.sh; lesson_num E "$(E)") || { echo "usage: make check E=NN (e.g. make check E=04)" >&2; exit 2; }; \
	 ls exercises/$${e}_*.cu >/dev/null 2>&1 || { echo "there is no exercise $$e (the exercises: $(firstword $(EXERCISES:exercise%=%)) to $(lastword $(EXERCISES:exercise%=%)))" >&2; exit 2; }; \
	 BUILDDIR="$(BUILDDIR)" bash tests/check_exercise.sh $$e

# The hints of exercise NN, one at a time: make hint E=04 (H=2 shows hint 2 again, H=0 starts over).
H ?=
hint:
	@sh scripts/hint.sh "$(E)" "$(H)"

# The measured tables in README.md and the notes, regenerated from results/.
tables:
	@sh scripts/tables.sh

# The five tiers of tests (host, build, ptx, exercises, gpu); the gpu tier is
# skipped, and says so, on a machine without a GPU.
test:
	@bash tests/run_tests.sh

clean:
	@rm -f $(BINARIES) $(LISTINGS) .build-flags-nvcc .build-flags-cccl .build-flags-nccl
	@rm -rf build
	@echo "removed the binaries, their .ptx and .sass listings, and build/ (runs/ and results/ are kept)"

# A name that is none of the above: say what there is.
define no_such_rule
$(1)%:
	@echo "there is no $$@: the $(2) are $(3) (make help lists every target)" >&2; exit 2
endef
$(eval $(call no_such_rule,lesson,lessons,$(firstword $(LESSONS:lesson%=%)) to $(lastword $(LESSONS:lesson%=%))))
$(eval $(call no_such_rule,exercise,exercises,$(firstword $(EXERCISES:exercise%=%)) to $(lastword $(EXERCISES:exercise%=%))))
$(eval $(call no_such_rule,solution,solutions,$(firstword $(SOLUTIONS:solution%=%)) to $(lastword $(SOLUTIONS:solution%=%))))
$(eval $(call no_such_rule,lab_,lab programs,$(LABS)))

help:
	@echo "Build (binaries land here, or in BUILDDIR):"
	@echo "  make                 every lesson, exercise, solution and lab program, one job per core (make -j1: one at a time)"
	@echo "  make lessonNN        one lesson, then ./lessonNN -h for its options (lessons: $(LESSONS:lesson%=%);"
	@echo "                       make lesson4 is make lesson04, and so for exercise4, solution4)"
	@echo "  make exerciseNN      your attempt at an exercise (exercises: $(EXERCISES:exercise%=%))"
	@echo "  make solutionNN      the reference answer to exercise NN"
	@echo "  make lessons | exercises | solutions | lab   all of one kind (lab: ./lab_NN_topic probes)"
	@echo "  make lessonNN.ptx    the PTX of a lesson (also exerciseNN.ptx, solutionNN.ptx)"
	@echo "  make lessonNN.sass   its machine code, by cuobjdump -sass"
	@echo "Run and measure (needs a GPU):"
	@echo "  make run [N=2^26]    every lesson in order: the staircase (lesson 01 runs at its own smaller n)"
	@echo "                       -> $(RESULTS)/run-<gpu>.csv and .txt"
	@echo "  make bench           size sweep 2^10..2^30 of lessons 09-15 and the libraries, L2 flushed dirty"
	@echo "                       and clean -> $(RESULTS)/bench-<gpu>.csv, bench-<gpu>-clean.csv (LO=20 HI=24 narrow it)"
	@echo "  make profile L=NN    Nsight Compute counters of lesson NN (./lessonNN -n 2^24 --check; N=... overrides)"
	@echo "  make diff L=NN       what lesson NN changes in the lesson it builds on (NN-1; 12 for 14-18)"
	@echo "Learn and check:"
	@echo "  make check E=NN      your exercise NN through the full test matrix; prints the smallest failing case"
	@echo "  make hint E=NN       the next hint for exercise NN: a nudge, the approach, the answer key"
	@echo "                       (H=k shows hint k, and the next plain call goes on after it; H=0 starts over)"
	@echo "  make test            all test tiers (host, build, ptx, exercises, gpu); the gpu tier needs a GPU"
	@echo "  make tables          regenerate the measured tables in README.md and the notes from results/"
	@echo "  make plot            SVG charts of results/ (the reference GPUs) and runs/ (yours, beside them)"
	@echo "  make clean           remove binaries, listings and build/ (runs/ and results/ stay)"
	@echo "Variables:"
	@echo "  ARCH=90              GPU architecture: native, sm_90, 9.0, 90, or a list \"75 90\" (now: $(ARCH));"
	@echo "                       one nvcc --list-gpu-arch names (sm_100 and sm_120 need CUDA 12.8 or newer)"
	@echo "  N=2^26               elements for make run (1e6, 2^20+3 and 1048576 are all understood)"
	@echo "  DEBUG=1              device debug build (-G -O0);  WERROR=1  warnings are errors"
	@echo "  EXTRA='-DFOO=1'      more nvcc flags;  NVCC=/path/to/nvcc  another compiler, and its toolkit (not CUDA_HOME's)"
	@echo "                       changing ARCH, NVCC, EXTRA, DEBUG, WERROR, CCCL_HOME or NCCL_HOME rebuilds what they affect"
	@echo "  BUILDDIR=build/x     build there instead of here (make lesson04 BUILDDIR=build/x)"
	@echo "  RESULTS=results      where run/bench write (default runs/, git-ignored; results/ is the reference)"
	@echo "  NCCL_HOME=DIR        NCCL for lesson 18 (found beside nvcc, in /usr or /usr/local by default)"
	@echo "  CCCL_HOME=DIR        a newer CUB for lessons 14-15 and the lab programs that use it: DIR/include[/cccl]/cub/cub.cuh (default: the toolkit's)"
	@echo "  TIERS=\"host build\"   run only these tiers of make test (host build ptx exercises gpu)"
	@echo "  GPU_PARTS=matrix     only these parts of the gpu tier (matrix big det san)"
