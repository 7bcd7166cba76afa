# reduce-lessons -- `make help` lists the targets.
#
# Every lesson, exercise and solution is found by its file name (never listed
# here): lessons/NN_name/NN_name.cu -> ./lessonNN, exercises/NN_name.cu ->
# ./exerciseNN, solutions/NN_name.cu -> ./solutionNN.

NVCC     ?= nvcc
# Compute capability to build for: the GPU's own (read from nvidia-smi),
# 90 when there is none; override with e.g. `make ARCH=80` or ARCH="75 90".
ARCH     ?= $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ')
ifeq ($(strip $(ARCH)),)
override ARCH := 90
endif
N        ?= 2^26
L        ?=
DEBUG    ?= 0
WERROR   ?= 0
BUILDDIR ?= .

# NCCL (lesson 18): found beside CUDA, in the system, or at NCCL_HOME.
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(shell command -v $(NVCC) 2>/dev/null))
NCCL_HOME ?= $(firstword $(foreach d,$(CUDA_HOME) /usr /usr/local,$(if $(wildcard $(d)/include/nccl.h),$(d))))
# (no -I/-L for places the compiler searches anyway: an explicit -I/usr/include breaks C++ headers)
NCCL_FLAGS := $(if $(filter-out /usr /usr/local $(CUDA_HOME),$(NCCL_HOME)),-I$(NCCL_HOME)/include -L$(NCCL_HOME)/lib64 -L$(NCCL_HOME)/lib)

LAST_ARCH := $(lastword $(ARCH))
# Machine code for every ARCH, plus PTX for the last one (the ptx test tier reads it).
GENCODE  := $(foreach a,$(ARCH),-gencode arch=compute_$(a),code=sm_$(a)) \
            -gencode arch=compute_$(LAST_ARCH),code=compute_$(LAST_ARCH)
NVFLAGS  := -std=c++17 -Icommon $(GENCODE) -Xcompiler -Wall,-Wextra
ifeq ($(DEBUG),1)
NVFLAGS  += -G -O0
else
NVFLAGS  += -O3 -lineinfo
endif
ifeq ($(WERROR),1)
NVFLAGS  += -Werror all-warnings
endif
NVFLAGS  += $(EXTRA)

LESSON_SRCS   := $(sort $(wildcard lessons/[0-9][0-9]_*/[0-9][0-9]_*.cu))
EXERCISE_SRCS := $(sort $(wildcard exercises/[0-9][0-9]_*.cu))
SOLUTION_SRCS := $(sort $(wildcard solutions/[0-9][0-9]_*.cu))

num   = $(firstword $(subst _, ,$(notdir $(1))))
out   = $(if $(filter .,$(BUILDDIR)),$(1),$(BUILDDIR)/$(1))
# Libraries a source asks for, from its line `// link: -lfoo`.
links = $(shell sed -n 's|^.*// link: ||p' $(1))

LESSONS   := $(foreach s,$(LESSON_SRCS),lesson$(call num,$(s)))
EXERCISES := $(foreach s,$(EXERCISE_SRCS),exercise$(call num,$(s)))
SOLUTIONS := $(foreach s,$(SOLUTION_SRCS),solution$(call num,$(s)))
BINARIES  := $(LESSONS) $(EXERCISES) $(SOLUTIONS)

.PHONY: all lessons exercises solutions run bench plot profile diff test clean help $(if $(filter .,$(BUILDDIR)),,$(BINARIES))

all: $(foreach b,$(BINARIES),$(call out,$(b)))
lessons:   $(foreach b,$(LESSONS),$(call out,$(b)))
exercises: $(foreach b,$(EXERCISES),$(call out,$(b)))
solutions: $(foreach b,$(SOLUTIONS),$(call out,$(b)))

# One rule per binary. A source that links NCCL is skipped, with a message,
# when NCCL is not installed: the rest of the build goes on.
define binary_rule
$(call out,$(1)): $(2) common/harness.h
ifneq ($(and $(findstring -lnccl,$(call links,$(2))),$(if $(NCCL_HOME),,none)),)
	@echo "$(1): skipped: NCCL not found (install it or set NCCL_HOME)"
else
	@mkdir -p $$(@D)
	$$(NVCC) $$(NVFLAGS) $(if $(findstring -lnccl,$(call links,$(2))),$$(NCCL_FLAGS)) -o $$@ $(2) $(call links,$(2))
endif
ifneq ($(BUILDDIR),.)
$(1): $(call out,$(1))
endif
endef
$(foreach s,$(LESSON_SRCS),$(eval $(call binary_rule,lesson$(call num,$(s)),$(s))))
$(foreach s,$(EXERCISE_SRCS),$(eval $(call binary_rule,exercise$(call num,$(s)),$(s))))
$(foreach s,$(SOLUTION_SRCS),$(eval $(call binary_rule,solution$(call num,$(s)),$(s))))

# Every lesson in order at one n; prints the staircase, writes results/run-<gpu>.csv.
run: lessons
	@NCCL_NVLS_ENABLE=0 sh scripts/run.sh "$(N)" $(LESSONS)

# Size sweep 2^10..2^30 of lessons 09-14; results/bench-<gpu>.csv and an SVG.
bench: lessons
	@sh scripts/bench.sh $(filter lesson09 lesson1%,$(filter-out lesson15 lesson16 lesson17 lesson18,$(LESSONS)))

# SVG charts from the CSVs in results/ (POSIX sh and awk only).
plot:
	@sh scripts/plot.sh

# The few Nsight Compute counters the notes quote, for one lesson: make profile L=04
PROFILE_METRICS := gpu__time_duration.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__thread_inst_executed_per_inst_executed.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed.sum
profile:
	@test -n "$(L)" || { echo "usage: make profile L=NN (e.g. L=04)"; exit 2; }
	@$(MAKE) --no-print-directory lesson$(L)
	ncu --clock-control none --kernel-name regex:'[Rr]educe|[Kk]ernel' --metrics $(PROFILE_METRICS) ./lesson$(L) -n $(N) --check

# What changed from lesson NN-1 to lesson NN: make diff L=05
diff:
	@test -n "$(L)" || { echo "usage: make diff L=NN (e.g. L=05)"; exit 2; }
	@prev=$$(printf %02d $$((10#$(L) - 1))); \
	 a=$$(ls lessons/$${prev}_*/$${prev}_*.cu 2>/dev/null); b=$$(ls lessons/$(L)_*/$(L)_*.cu 2>/dev/null); \
	 test -n "$$a" -a -n "$$b" || { echo "no lessons $$prev and $(L)"; exit 2; }; \
	 diff -u "$$a" "$$b"; true

# The five tiers of tests (host, build, ptx, exercises, gpu); the gpu tier is
# skipped, and says so, on a machine without a GPU.
test:
	@bash tests/run_tests.sh

clean:
	rm -f $(BINARIES)
	rm -rf build

help:
	@echo "make                  build every lesson, exercise and solution (ARCH=$(ARCH))"
	@echo "make lessonNN         build one lesson, then ./lessonNN -h for its options"
	@echo "make exerciseNN       build your attempt at an exercise (solutionNN: the answer)"
	@echo "make run [N=2^26]     run every lesson in order: the staircase, results/run-<gpu>.csv"
	@echo "make bench            size sweep 2^10..2^30 of lessons 09-14 and the libraries"
	@echo "make plot             SVG charts of the CSVs in results/"
	@echo "make profile L=NN     Nsight Compute counters for lesson NN"
	@echo "make diff L=NN        what changed from lesson NN-1 to NN"
	@echo "make test             all test tiers (the gpu tier needs a GPU)"
	@echo "make clean            remove binaries and build/"
	@echo "options: ARCH=90 (or \"75 90\"), DEBUG=1 (-G), WERROR=1, N=..., NVCC=..., NCCL_HOME=..."
