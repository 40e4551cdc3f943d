/*
 * An older x86-64 CPU's instruction set, as this process's CPUID reports it (Linux, x86-64).
 *
 * Loaded with LD_PRELOAD (strands_voice_tools.bench.isa builds and loads it). With
 * STRANDS_VOICE_EMULATED_ISA set to "avx2" (Haswell to Zen 3: no AVX-512, no VNNI) or "avx512"
 * (Skylake-SP: AVX-512 without VNNI), it turns on the kernel's CPUID faulting for the process
 * (arch_prctl ARCH_SET_CPUID; inherited by every thread it starts) and answers each CPUID from a
 * SIGSEGV handler: the real answer with the newer features' bits cleared. Libraries that choose their
 * kernels from CPUID (onnxruntime's MLAS, numpy) then run the kernels they run on that older CPU, at this
 * CPU's speed. On success it sets STRANDS_VOICE_EMULATED_ISA_ACTIVE=1 in the environment, which the
 * process reads at start-up.
 *
 * Only CPUID is masked: XGETBV still says the OS saves AVX-512 state, and every library checked here asks
 * CPUID first. A SIGSEGV that is not a CPUID falls through to the default action (the process dies as it
 * would have).
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define BIT(n) (1u << (n))

/* CPUID leaf 7, subleaf 0: EBX. AVX512 F, DQ, IFMA, PF, ER, CD, BW, VL. */
static const uint32_t AVX512_EBX = BIT(16) | BIT(17) | BIT(21) | BIT(26) | BIT(27) | BIT(28) | BIT(30) | BIT(31);
/* ECX: AVX512 VBMI, VBMI2, BITALG, VPOPCNTDQ (VNNI, bit 11, apart). */
static const uint32_t AVX512_ECX = BIT(1) | BIT(6) | BIT(12) | BIT(14);
/* EDX: AVX512 4VNNIW, 4FMAPS, VP2INTERSECT, FP16. */
static const uint32_t AVX512_EDX = BIT(2) | BIT(3) | BIT(8) | BIT(23);
static const uint32_t AVX512_VNNI_ECX = BIT(11);
/* EDX: AMX BF16 (22), TILE (24), INT8 (25): Sapphire Rapids' tile kernels, newer than either ISA emulated. */
static const uint32_t AMX_EDX = BIT(22) | BIT(24) | BIT(25);
/* Leaf 7, subleaf 1: EAX AVX-VNNI (4), AVX512_BF16 (5), AMX-FP16 (21); EDX AVX-VNNI-INT8 (4), AMX-COMPLEX (8),
 * AVX10 (19). */
static const uint32_t VNNI_7_1_EAX = BIT(4) | BIT(5) | BIT(21);
static const uint32_t VNNI_7_1_EDX = BIT(4) | BIT(8) | BIT(19);

static int mask_avx512;

static void answer_cpuid(int signal_number, siginfo_t *info, void *context) {
    ucontext_t *user_context = context;
    greg_t *registers = user_context->uc_mcontext.gregs;
    const uint8_t *instruction = (const uint8_t *)registers[REG_RIP];
    (void)info;
    if (instruction[0] != 0x0f || instruction[1] != 0xa2) {
        signal(signal_number, SIG_DFL); /* not a CPUID: the fault happens again, unhandled */
        return;
    }
    uint32_t leaf = (uint32_t)registers[REG_RAX], subleaf = (uint32_t)registers[REG_RCX];
    uint32_t a, b, c, d;
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(leaf), "c"(subleaf));
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
    if (leaf == 7 && subleaf == 0) {
        c &= ~AVX512_VNNI_ECX;
        d &= ~AMX_EDX;
        if (mask_avx512) {
            b &= ~AVX512_EBX;
            c &= ~AVX512_ECX;
            d &= ~AVX512_EDX;
        }
    } else if (leaf == 7 && subleaf == 1) {
        a &= ~VNNI_7_1_EAX;
        d &= ~VNNI_7_1_EDX;
    }
    registers[REG_RAX] = a;
    registers[REG_RBX] = b;
    registers[REG_RCX] = c;
    registers[REG_RDX] = d;
    registers[REG_RIP] += 2;
}

__attribute__((constructor)) static void start_masking(void) {
    const char *isa = getenv("STRANDS_VOICE_EMULATED_ISA");
    if (isa == NULL || (strcmp(isa, "avx2") != 0 && strcmp(isa, "avx512") != 0)) {
        return;
    }
    mask_avx512 = strcmp(isa, "avx2") == 0;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = answer_cpuid;
    action.sa_flags = SA_SIGINFO;
    if (sigaction(SIGSEGV, &action, NULL) != 0 || syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0) != 0) {
        return; /* no CPUID faulting here: STRANDS_VOICE_EMULATED_ISA_ACTIVE stays unset */
    }
    setenv("STRANDS_VOICE_EMULATED_ISA_ACTIVE", "1", 1);
}
