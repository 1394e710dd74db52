//! What each finding means and what to do about it, as data: code chooses
//! which findings fire and fills the `{placeholders}` with figures; the
//! words live here, one entry per id (the match is exhaustive, so a new id
//! cannot ship without its text).

use crate::ids::FindingId;

/// A finding's explanation and action.
pub(crate) struct FindingText {
    pub explanation: &'static str,
    pub action: &'static str,
}

const fn t(explanation: &'static str, action: &'static str) -> FindingText {
    FindingText {
        explanation,
        action,
    }
}

/// Why the gauges read fewer requests than Little's law.
pub(crate) const GAUGES_LOW_CAUSE: &str = "Little's law over finished requests cannot overcount (a request that never finishes only lowers it), so the gauges are the suspect: they go stale when the process that records them (the API server's loop, several of them with --api-server-count) is starved of CPU or reports out of step, and they do not see requests that wait before the scheduler (in the API server or the tokenizer). The report gives Little's figure for these phases and for where queueing starts.";
/// What to do about gauges that read too few.
pub(crate) const GAUGES_LOW_ACTION: &str = "Do not size, autoscale or alert on vllm:num_requests_running and vllm:num_requests_waiting for this deployment until they agree with rate(vllm:request_success_total) × the mean of vllm:e2e_request_latency_seconds; check the API server's CPU (top -H on its processes) and alert on the queue-time histogram instead.";
/// Why the gauges read more requests than Little's law.
pub(crate) const GAUGES_HIGH_CAUSE: &str = "Little's law over finished requests is a lower bound: requests that never finished in the engine's counts (clients that hung up, answers still running when the capture ended) sit in the gauges and not in the finished rate, so here the gauges are the better figure and the report keeps them.";

const MISSING: &str =
    "None of {names} was captured, so this cannot be judged. It is shown as missing, not as zero.";

// long: a table of words, one arm per finding id (the match is exhaustive, so no id ships without its text)
/// The words of a finding.
pub(crate) fn finding(id: FindingId) -> FindingText {
    use FindingId as F;
    match id {
        F::LatencyPhasesMissing
        | F::EfficiencyBatchingMissing
        | F::EfficiencyKvMissing
        | F::EfficiencyPrefixMissing
        | F::WorkloadTokensMissing
        | F::OutcomesReasonsMissing
        | F::HardwareDcgmMissing
        | F::MemoryEnergyMissing
        | F::MemoryKvMissing
        | F::MemoryVramMissing => t(MISSING, ""),
        F::LatencyPrefillInterference => t(
            "The prompts are long and the answers short, yet decode is most of the time. Each engine step that carries a chunk of some other request's long prompt takes far longer than a decode-only step, so every running answer waits for those chunks: inter-token latency is dominated by other requests' prefill.",
            "Separate prefill from decode (disaggregated serving such as llm-d) if inter-token latency matters; smaller prefill chunks (--max-num-batched-tokens) trade it against time to first token.",
        ),
        F::LatencyDecodeDominates => t(
            "Requests spend almost all their engine time generating tokens one by one. Work on the prompt side (chunked prefill, prompt compression, prefix caching) cannot move total latency much. Each decode step streams the model's weights (and the batch's KV cache) from memory, so where the measured inter-token latency sits near the decode floor, fewer bytes per token (quantization), more memory bandwidth (a faster GPU, tensor parallelism within a node) or a smaller model is what shortens it; far above the floor, batch size, scheduling and communication between GPUs weigh more.",
            "",
        ),
        F::LatencyPrefillDominates => t(
            "Requests spend much of their time reading the prompt. Shorter prompts, a shared prompt prefix that the prefix cache can reuse, and chunked prefill (so that long prompts do not stall running decodes) are the levers.",
            "",
        ),
        F::LatencyBalanced => t("No single phase dominates.", ""),
        F::LatencyQueueing => t(
            "A request is queued when {waiting} stays above zero on two consecutive scrapes, or when a window's mean queue time reaches {negligible} ms (vLLM records it when a request finishes, so it is charged to the requests in flight over that request's life). Queueing means more requests arrived than the server admits at once: the admission cap is --max-num-seqs or, when it fills first, the KV cache.{excluded}",
            "",
        ),
        F::LatencyNoQueueing => t(
            "No replica had {waiting} above zero on two consecutive scrapes, and no window's mean queue time reached {negligible} ms: requests were admitted as they arrived.{excluded}",
            "",
        ),
        F::LatencyBelowFloor => t(
            "Each decode step streams the model's weights from memory once: {weights} ÷ {bandwidth} per GPU ({gpu}) takes {floor} per step, more than the {objective} objective allows a token. No setting reaches it on this hardware.",
            "Change what the floor rests on: FP8 weights (the floor halves) or 4-bit weights (about a quarter), tensor parallelism over more GPUs, or a GPU with more bandwidth; or relax the objective.",
        ),
        F::LatencyFloor => t(
            "Each decode step streams the weights once ({weights} ÷ {bandwidth} per GPU, {gpu}): {floor} per step at the least. The measured mean inter-token latency is {measured}, so batching, KV reads and scheduling add {over} above that floor.",
            "",
        ),
        F::LatencyFrontendOverhead => t(
            "Time to first token should be about queue + prefill. The rest is spent in the API server before the engine sees the request or after it produced the token: tokenisation, request validation, detokenisation, or a Python process short of CPU.",
            "Check the API server's CPU; consider --api-server-count.",
        ),
        F::LatencyTtftStall | F::LatencyItlStall => t(
            "The p95 can pass while the slowest 1 % of {what} is far worse: the p99 lies {bucket}, at least three times the {objective} objective. Users see these as freezes. They usually come from long prefills sharing an engine step, preemptions, or a queue that builds in bursts.",
            "",
        ),
        F::EfficiencyBatchingBroken => t(
            "With continuous batching every running request adds a token to each step, so tokens per step should be close to the number running. About one token per step with many running means requests are processed one at a time.",
            "Check --max-num-seqs, --max-num-batched-tokens and whether the client serialises requests.",
        ),
        F::EfficiencyBatchingOk => t(
            "Each engine step carries a token for about every running request (plus prompt chunks), as it should.",
            "",
        ),
        F::EfficiencyKvUsage => t(
            "KV-cache usage is the share of the block pool vLLM allocated at start-up (sized by --gpu-memory-utilization; on a CPU server by VLLM_CPU_KVCACHE_SPACE), not of VRAM. Near 100 % new requests wait for blocks or running ones are preempted; far below it the pool has room for many more concurrent requests.",
            "{action}",
        ),
        F::EfficiencyNoPreemptions => t("The KV pool never ran out.", ""),
        F::EfficiencyPreemptions => t(
            "The KV pool ran out: running requests were evicted and must recompute their prompt later, which wastes GPU time and adds latency.",
            "Lower --max-num-seqs, or raise --gpu-memory-utilization (or add a GPU) so the pool holds the concurrency.",
        ),
        F::EfficiencyPrefixLifetimeOnly => t(
            "This vLLM release exports the hit rate since the server started, not counters, so it cannot be read per window. A value of −1 means prefix caching is off (the V0 default).",
            "Turn on --enable-prefix-caching if prompts share a prefix; newer releases export windowable counters.",
        ),
        F::EfficiencyPrefixLow => t(
            "Only {hit} % of prompt tokens were found in the prefix cache; the rest was computed again. Requests share cached blocks only for byte-identical text at the start of the prompt, and only in whole KV blocks. Prompt text is not in /metrics, so whether more could be shared cannot be told from this capture alone.",
            "",
        ),
        F::EfficiencyPrefixCeiling => t(
            "With {shared} shared tokens at the start of every prompt and {block}-token KV blocks, the cache can serve at most {ceiling} of each {prompt}-token prompt (whole blocks only); it served {hit}.{below}",
            "{action}",
        ),
        F::EfficiencyPrefixAboveStated => t(
            "The cache served {hit} of each {prompt}-token prompt, more than the {ceiling} that {shared} shared tokens give in whole {block}-token blocks. So prompts share more than the stated prefix: it is longer than stated, or requests repeat text beyond it (retries, the same document, a conversation's earlier turns). {ceiling} is no ceiling here.",
            "Measure what prompts share at their start and state that (--shared-prefix-tokens) to judge the cache against it.",
        ),
        F::EfficiencyPrefixOk => t(
            "A good part of every prompt is served from cache instead of being computed again.",
            "",
        ),
        F::EfficiencyPrefixOff => t(
            "vllm:gpu_prefix_cache_hit_rate reads −1: this V0 server runs without prefix caching (its default), so every prompt is computed in full, even text every request shares.",
            "Start vLLM with --enable-prefix-caching (on by default from the V1 engine).",
        ),
        F::DataQualityGaugesDisagree => t(
            "By Little's law the requests in the engine are its finished requests per second times their mean end-to-end latency, both from the engine's own counters and histogram (exact sums, not buckets). vLLM's running and waiting gauges tell the same thing as a sample: the engine sets them at its steps and a scrape reads the last value set. Here they disagree over {windows} windows: the gauges read {gauges} on average where Little's law gives {little}. {cause}",
            "{action}",
        ),
        F::EfficiencyWaiting => t(
            "Waiting requests ({waiting}) are not yet running: the engine had no room (sequences or KV blocks) for them. A single scrape with a waiting request is an arrival caught between two engine steps and is not counted.",
            "",
        ),
        F::WorkloadDecodeHeavy => t(
            "Short prompts, long answers (chat, generation). Inter-token latency and memory bandwidth matter most.",
            "",
        ),
        F::WorkloadMixed => t("Neither prompts nor answers dominate the token flow.", ""),
        F::WorkloadNotTruncated => t("Most answers end on their own before max_tokens.", ""),
        F::WorkloadPrefillHeavy => t(
            "Long prompts, short answers (retrieval, classification, extraction). Time to first token and prefill throughput matter most; prefix caching and chunked prefill are the levers.",
            "",
        ),
        F::WorkloadShapeChanged => t(
            "The two halves of the capture do not see the same kind of traffic, so a figure for the whole capture mixes two workloads. Tuning that fits one may not fit the other.",
            "Read the phases separately; re-check the tuning when the shape changes.",
        ),
        F::WorkloadPartlyTruncated => t(
            "{share} of requests stopped at their max_tokens (finished_reason=\"length\"), mid-answer unless a short answer is what their clients asked for. vLLM counts requests per reason whatever each one's max_tokens, so this share is the figure to read first.",
            "Find which clients send the low max_tokens (their request logs), and raise it where the cut answers are not by design.",
        ),
        F::WorkloadTruncated => t(
            "When the average answer is about as long as max_tokens, or most requests finish with finished_reason=\"length\", the model is being stopped mid-answer. Users see truncated output, and retries add load.",
            "Raise the client's max_tokens (or ask for shorter answers in the prompt).",
        ),
        F::OutcomesClientAbortsUncounted => t(
            "In V1 a client that disconnects mid-answer goes through an abort path that records no per-request statistics: finished_reason=\"abort\" stays 0 for it and it is missing from the latency histograms, while its prompt still counts in prompt tokens. Without http_requests_total they cannot be estimated from this capture.",
            "",
        ),
        F::OutcomesClientDisconnects => t(
            "vLLM V1 does not count a client that disconnects mid-answer as an abort: the stream had already answered 200, so the API server counts a 2xx, while the engine records no finished request. HTTP 2xx on /v1/completions and /v1/chat/completions minus finished requests (clamped at 0) estimates them; requests finishing at a window's edge move the per-window figure by a few, not the total. It is a lower bound: a client that hangs up while its answer's last tokens are on their way is finished normally by the engine (and answered 2xx), so it counts as finished, not as a disconnect; the client's own count of time-outs is the upper figure.",
            "",
        ),
        F::OutcomesDriftToLength => t(
            "A growing share of answers is cut at max_tokens: the prompts or the model's answers got longer.",
            "Check max_tokens against the answers clients now expect.",
        ),
        F::OutcomesErrorsAborts => t(
            "finished_reason=\"error\" and \"abort\" are requests the engine failed or cancelled; users saw no (complete) answer.",
            "Read the server log around the windows listed; check client time-outs and request validation.",
        ),
        F::OutcomesErrorsAbortsLow => t(
            "finished_reason=\"error\" and \"abort\" are requests the engine failed or cancelled; they stayed under the objective.",
            "",
        ),
        F::OutcomesErrorBurst => t(
            "Errors and aborts are concentrated in these minutes rather than spread over the capture: something happened then (a bad client release, a dependency failing, an overload, a deploy). The whole-capture rate dilutes it.",
            "Read the server and gateway logs for these minutes.",
        ),
        F::OutcomesHttpErrors => t(
            "{where}",
            "Group the HTTP errors by handler and status in the table below; fix the client for 4xx, the server for 5xx.",
        ),
        F::OutcomesHttpMissing => t(
            "http_requests_total exists from vLLM 0.8.3 and is missing on V0 servers with the multiprocessing front end; errors that never reach the engine, and client disconnects, cannot be counted.",
            "",
        ),
        F::OutcomesHttpOk => t("Every HTTP request answered 2xx.", ""),
        F::OutcomesRestart => t(
            "{replica} started a new process during the capture: its counters reset (read as a restart, never as a negative rate), the requests it was running or queueing were lost, and clients retried or failed.",
            "Find why: the pod's last state (OOMKilled, liveness probe, eviction) and the previous container's log.",
        ),
        F::OutcomesAdmissionRejected => t(
            "The server turned these requests away before the engine (--max-num-queued-reqs or --max-num-queued-tokens): no finished_reason counts them, so the error + abort rate does not include them; clients saw an error.",
            "If the limit protects latency on purpose, add capacity (see Capacity); if it is set lower than the load needs, raise it.",
        ),
        F::HardwareComputeBound => t(
            "The tensor cores are busy: long prefills or large batches. More FLOPs (a bigger GPU, tensor parallelism) or less prefill work (prefix caching) help.",
            "",
        ),
        F::HardwareHot => t(
            "Above about 85 °C GPUs lower their clocks to protect themselves.",
            "Check cooling and the power limit.",
        ),
        F::HardwareIdle => t("Few kernels run: the load is light for this GPU.", ""),
        F::HardwareMemoryBound => t(
            "The GPU spends its time streaming weights and KV cache from memory while the tensor cores wait: classic decode. More compute will not help; fewer bytes per token (quantization: FP8, INT4) or more bandwidth will.",
            "",
        ),
        F::HardwareMixed => t("Neither compute nor memory bandwidth is saturated.", ""),
        F::HardwareProfMissing => t(
            "dcgm-exporter skips every DCGM_FI_PROF_* series when profiling is unsupported or not enabled (older default-counters.csv, no SYS_ADMIN, DCP module missing, mixed GPU models). Without tensor and DRAM activity, GPU util alone cannot say whether the GPU is memory-bound or compute-bound.",
            "Run dcgm-exporter with dcp-metrics-included.csv (the GPU Operator's default) or uncomment DCGM_FI_PROF_GR_ENGINE_ACTIVE, DCGM_FI_PROF_PIPE_TENSOR_ACTIVE and DCGM_FI_PROF_DRAM_ACTIVE in the counters file; give the container the SYS_ADMIN capability.",
        ),
        F::HardwareStarved => t(
            "Kernels leave gaps: the host (scheduler, tokenizer, Python) cannot feed the GPU fast enough.",
            "",
        ),
        F::HardwareUtilIsResidency => t(
            "DCGM_FI_DEV_GPU_UTIL is the share of time any kernel is resident, not how much of the GPU it uses: one small kernel reads 100 %. It cannot tell a saturated GPU from one with room to spare, so never plan capacity or autoscale on it.",
            "Use requests in flight, queue time and KV usage for capacity; tensor and DRAM activity for the kind of work.",
        ),
        F::HardwareXid => t(
            "DCGM_FI_DEV_XID_ERRORS holds the last XID code the driver raised: hardware faults, driver resets, out-of-memory faults in kernels. The code is an identifier, not a count.",
            "Look the code up in NVIDIA's XID catalogue and check the node's kernel log.",
        ),
        F::HardwareMemoryErrors => t(
            "A double-bit ECC error is a memory error the GPU could not correct: the data it hit was wrong, and the process using it is usually stopped. GPUs with row remapping (A100, H100 and later) replace the row that failed at their next reset; a failed remap means the row could not be replaced. These counts last until the driver reloads (ECC volatile) or for the board's life (remapped rows).",
            "Drain the GPU, reset it to apply pending remaps, and run NVIDIA's diagnostic on it before it serves again.",
        ),
        F::HardwareClocksHeld => t(
            "DCGM_FI_DEV_CLOCKS_EVENT_REASONS says why the clocks run below their maximum. Idle (0x1) and the software power cap (0x4) are normal operation; sw_thermal (0x20) and hw_thermal (0x40) are heat, hw_slowdown (0x8) and hw_power_brake (0x80) are signals from the board or the system's power supply. The GPU then runs slower than it can, and every latency with it.",
            "Check the node's cooling and power supply.",
        ),
        F::MemoryEnergy => t(
            "Generated tokens per joule (from the GPU's energy counter) and per watt of mean power: the energy cost of the work, comparable before and after a change. Batching more requests per step usually raises it, since power barely moves with load on a busy GPU.",
            "",
        ),
        F::MemoryKvVsVram => t(
            "vLLM takes its share of VRAM (--gpu-memory-utilization) at start-up and carves the KV-cache pool out of it, so VRAM reads nearly full from the first second whatever the load. The KV pool is what fills with load. Autoscale on requests in flight or KV usage, plan capacity on VRAM, and never alert on VRAM.",
            "",
        ),
        F::MemoryPoolOversized => t(
            "At this load the pre-allocated pool is far larger than needed: the deployment has room for many more concurrent requests, or for a second, smaller model on the same GPU with a lower --gpu-memory-utilization.",
            "",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_finding_has_words() {
        for f in FindingId::ALL {
            let text = finding(*f);
            assert!(!text.explanation.is_empty(), "{f}");
        }
    }
}
