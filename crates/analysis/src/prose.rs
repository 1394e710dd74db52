//! The report's prose as data: what each finding means and what to do
//! about it, and each recommendation's wording. Code chooses which fire
//! and fills the `{placeholders}` with figures; the words live here, one
//! entry per id (the matches are exhaustive, so a new id cannot ship
//! without its text).

use crate::ids::{FindingId, RecId};

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

const MISSING: &str =
    "None of {names} was captured, so this cannot be judged. It is shown as missing, not as zero.";

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
            "vLLM V1 does not count a client that disconnects mid-answer as an abort: the stream had already answered 200, so the API server counts a 2xx, while the engine records no finished request. HTTP 2xx on /v1/completions and /v1/chat/completions minus finished requests (clamped at 0) estimates them; requests finishing at a window's edge move the per-window figure by a few, not the total.",
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

/// A recommendation's words: the rationale (`why`) is filled with the
/// evidence's figures.
pub(crate) struct RecText {
    pub title: &'static str,
    pub why: &'static str,
    pub action: &'static str,
    pub caveat: &'static str,
}

const fn r(
    title: &'static str,
    why: &'static str,
    action: &'static str,
    caveat: &'static str,
) -> RecText {
    RecText {
        title,
        why,
        action,
        caveat,
    }
}

/// Fragments some rationales and actions take, filled where they apply.
pub(crate) const MORE_KV_ROOM: &str = "Give the KV cache more room: {options}.";
pub(crate) const LOWER_MAX_NUM_SEQS: &str = " Or lower --max-num-seqs so admitted requests fit the pool: the wait moves from recomputation to the queue, which the queue and TTFT objectives can afford here.";
pub(crate) const LOWER_MAX_NUM_SEQS_ALONE: &str = "Lower --max-num-seqs so admitted requests fit the pool: the wait moves from recomputation to the queue, which the queue and TTFT objectives can afford here.";
pub(crate) const PRESSURE_QUEUED_ONLY: &str = "Requests already queued from {start} in flight.";
pub(crate) const HTTP_BEFORE_ENGINE: &str =
    "more requests fail at the HTTP layer than in the engine, so most never reached it.";
pub(crate) const HTTP_TRACKS_ENGINE: &str = "the HTTP errors track the engine's own.";
pub(crate) const OR_LOWER_MAX_TOKENS: &str = " or lower max_tokens to fit it";
pub(crate) const FLOOR_PART_UNREACHABLE: &str = " The weights alone take {floor} per step to stream on the {gpu}; FP8 weights bring that to {half}, still above the {objective} objective: quantization frees memory here, it cannot meet that objective on this hardware.";
pub(crate) const MORE_PREFILL_COMPUTE: &str =
    ", or give prefill more compute: tensor parallelism or a GPU with more FLOP/s";
pub(crate) const QUEUE_SHARE_OF_TTFT: &str =
    "; queueing is {share} of the mean time to first token where TTFT misses its objective";
pub(crate) const PRESSURE_QUEUED: &str = "Requests already queued from {start} in flight: the queue objective ({n}) holds, and load above that per replica waits.";
pub(crate) const PRESSURE_KV: &str =
    "The KV cache reached {kv}: near full, new requests wait and running ones are preempted.";
pub(crate) const FREES_KV: &str = " and frees memory for the KV cache, which is what fills here";
pub(crate) const INTERFERENCE_WHY: &str = "Long prompts' prefill shares engine steps with running answers: the inter-token p95 lies {p95}, against a median near {p50}, and decode is still {share} of engine time although the answers are short next to the prompts.";
pub(crate) const DISAGGREGATE_ONLY: &str = "Run prefill and decode on separate workers (llm-d, or vLLM's disaggregated prefill). Smaller prefill chunks are no option here: time to first token already misses its objective.";
pub(crate) const SMALLER_CHUNKS_THEN_DISAGGREGATE: &str = "Lower --max-num-batched-tokens (smaller prefill chunks per step) while time to first token has room; if that is not enough, run prefill and decode on separate workers (llm-d, or vLLM's disaggregated prefill).";
pub(crate) const DISAGGREGATE_CAVEAT: &str = "Disaggregation needs more GPUs and a KV transfer path; smaller chunks raise time to first token.";
pub(crate) const ROUTING_WHY: &str = "{replicas} replicas share long prompts ({prompt} tokens on average) but hit the prefix cache only {hit} of the time: a request whose prefix is cached on one replica often lands on another. Prefill is {share} of the mean time to first token.";
pub(crate) const ROUTE_BY_PREFIX: &str = "Use prefix- or session-aware routing (llm-d's inference scheduler, or session affinity at the load balancer) so follow-up requests reach the replica that holds their prefix.";
pub(crate) const BOUND_DCGM: &str =
    "Decode is memory-bound: DRAM {dram} active against tensor cores {tensor}.";
pub(crate) const BOUND_ESTIMATES: &str =
    "Decode is memory-bound by vLLM's estimates: MBU {mbu} against MFU {mfu}.";
pub(crate) const BOUND_FLOOR: &str = "Each decode step streams every weight from memory once.";
pub(crate) const FLOOR_PART: &str = " The weights alone take {floor} per step to stream on the {gpu}; FP8 weights bring that to {half}.";
pub(crate) const ROUTING_CAVEAT: &str = "The tool cannot see how requests were routed; a low hit rate can also mean prompts share little text.";

/// The words of a recommendation.
pub(crate) fn rec(id: RecId) -> RecText {
    use RecId as R;
    match id {
        R::RaiseMaxNumSeqs => r(
            "Raise --max-num-seqs: the server admits fewer requests than the objective",
            "At most {cap} requests ran at once while others waited, fewer than the {n} the queue objective names, and queueing began at {start} in flight. The KV cache peaked at {kv}, so memory is not what caps admission: the engine's own limit (--max-num-seqs) is.",
            "Start vLLM with --max-num-seqs of at least {target} (the KV cache peaked at {kv}, so it has room); capture again and check that queueing now starts above {n} in flight.",
            "A higher cap lets more requests share each engine step, so each one's inter-token latency grows a little; watch the inter-token objective.",
        ),
        R::TunePreemptions => r(
            "Stop the preemptions: the KV cache runs out",
            "{preemptions} preemptions per minute with the KV cache at up to {kv}: running requests are evicted and recomputed, and new ones wait for blocks.",
            "{room}{lower}",
            "Each lever costs something: memory headroom, accuracy, or hardware.",
        ),
        R::MoveToKserve => r(
            "Add replicas: one server cannot admit the load",
            "Requests queued from {start} in flight, with at most {cap} running at once{ttft}.",
            "Run more replicas behind an autoscaler (KServe, or a Deployment with the KEDA trigger this recommendation carries) that adds one before requests queue.",
            "If the peak is short and predictable, scheduled scaling or client-side rate limiting may be cheaper.",
        ),
        R::SetAutoscalingTrigger => r(
            "Autoscale on requests in flight, before they queue",
            "{pressure}",
            "Add the KEDA trigger this recommendation carries (in the HTML report and the JSON): it keeps about {target} requests in flight per replica ({why}), and waits five minutes before scaling down so the replica count does not flap. On a host without Kubernetes, the same query and target drive any autoscaler or a capacity alert.",
            "A new replica takes minutes to load the model; with fast start-up a higher target wastes less.",
        ),
        R::InvestigateRestart => r(
            "Find why the server restarted",
            "{replica} restarted {times} during the capture: unreachable for up to {down}, losing {lost}.",
            "Find what stopped the old process after its last scrape at {last} (the new one started at {time}): on Kubernetes, the pod's last state (kubectl describe pod: OOMKilled, liveness probe, eviction) and the previous container's log (kubectl logs --previous); on a host, the kernel log for the OOM killer (dmesg) and the service's journal. With one replica, new requests fail for as long as it is down: a second replica behind the load balancer keeps serving them (the requests in flight on the stopped one still fail unless clients retry).",
            "A planned rollout also restarts the server; then the lost requests are the cost of the rollout strategy.",
        ),
        R::InvestigateGpuFault => r(
            "Diagnose {gpu}: it reported a hardware fault",
            "{what}.",
            "{how}",
            "{caveat}",
        ),
        R::InvestigateErrorBurst => r(
            "Find what caused the burst of errors",
            "From {from} to {to}: {what}. The capture's own rate does not explain that many in so few requests.",
            "Read the server and gateway logs from {from} to {to}. 4xx are requests the server refused (client bugs, validation, payload size); 5xx and finished_reason=\"error\" failed in the server; aborts are requests the engine cancelled.",
            "A burst during a deploy or a client's load test may be expected; then exclude those minutes from the objective.",
        ),
        R::ScaleApiServer => r(
            "Give the API server more CPU",
            "{share} of the mean time to first token passes outside the engine (neither queue nor prefill).",
            "Run more API server processes (--api-server-count) or give the pod more CPU; time spent tokenising and validating adds to every request's time to first token.",
            "The gap can also be network or load-balancer time if TTFT is measured by a client; vLLM's own histogram starts at the API server.",
        ),
        R::SpeedUpPrefill => r(
            "Shorten prefill: it is most of the time to first token",
            "Prefill is {share} of the mean time to first token where it misses ({prompt} prompt tokens per request on average); queueing is {queue}.",
            "Send fewer prompt tokens (trim history, retrieved text or examples), put text that requests share first so the prefix cache can serve it{compute}. Prefill is compute-bound, so memory tricks do not help it.",
            "Long prompts may be what the product needs; then the objective, not the deployment, is what to revisit.",
        ),
        R::QuantizeBeforeBuying => r(
            "Quantize before buying hardware",
            "{bound} Halving the bytes per weight (FP8, or INT4 AWQ/GPTQ) shortens each decode step{kv}.{floor}",
            "Try an FP8 (or INT4) build of the same model, capture again and compare; add GPUs only if that is not enough.",
            "Quantization can cost accuracy on some tasks; check quality on your own evaluation set. GPUs without native FP8 (A10G, T4) run INT4 weight-only kernels instead.",
        ),
        R::StopOptimisingPrefill => r(
            "Do not spend effort on prefill: decode is what misses the objective",
            "Inter-token latency misses its objective and decode is {share} of the time requests spend in the engine; time to first token meets its own. Prefill work cannot move the pace of the answer.",
            "Spend effort on decode speed (quantization, tensor parallelism, a smaller model) rather than chunked-prefill tuning or prompt compression.",
            "Time to first token still depends on prefill; this applies to the pace of the answer.",
        ),
        R::MoveToLlmD => r(
            "Separate prefill from decode, or route by prefix (e.g. llm-d)",
            "{why}",
            "{action}",
            "{caveat}",
        ),
        R::RaiseMaxTokens => r(
            "Raise the client's max_tokens",
            "{length} of requests end on length and answers use {used}{cut}",
            "Raise max_tokens in the client (or ask for shorter answers in the prompt); then expect decode time per request to grow.",
            "A deliberately low max_tokens (cost control, UI limits) is a product decision; then the figure is expected.",
        ),
        R::StandardisePromptPrefix => r(
            "Standardise the prompt prefix",
            "Only {hit} of prompt tokens hit the prefix cache, against the {ceiling} the {shared}-token shared prefix allows in whole blocks: the shared text is not byte-identical across requests, or not first.",
            "Put the fixed part of the prompt (system prompt, tool definitions, examples) first and keep it byte-identical across requests; move timestamps, user names and retrieved text after it.",
            "Prompt text is not in /metrics: if prompts genuinely share little text, or the shared part is shorter than one KV block, no ordering will raise the hit rate.",
        ),
        R::RevisitOnShapeChange => r(
            "Revisit the tuning: the workload changed shape",
            "Generated tokens per prompt token moved from {from} to {to} during the capture; settings tuned for one shape may not suit the other.",
            "Capture each traffic pattern separately and compare; alert when the generated/prompt ratio moves by more than 2×.",
            "A short capture can catch a burst that is not typical.",
        ),
        R::ShrinkBlockSize => r(
            "Make the shared prefix cacheable: smaller KV blocks",
            "The shared prefix ({shared} tokens) is shorter than one KV block ({block} tokens), and the prefix cache only reuses whole blocks, so no prompt ever reuses it.",
            "Start vLLM with a smaller --block-size (16 on GPUs; the CPU backend defaults to 128), or lengthen the shared part of the prompt to a multiple of the block size.",
            "Smaller blocks cost a little more bookkeeping per token; on the CPU backend the block size also affects the attention kernels' speed.",
        ),
        R::InvestigateHttpErrors => r(
            "Find the requests the server refused or failed",
            "{http} of HTTP requests were answered 4xx or 5xx ({r4xx} 4xx and {r5xx} 5xx per minute) while {engine} of finished requests ended in error or abort: {where}",
            "Read the API server's access log (or the gateway's) for those status codes and the clients that sent them. A 400 is a malformed request or a parameter out of range (a prompt longer than --max-model-len, an unknown field), a 404 a wrong path or model name, a 429 or 503 overload; 5xx failed in the server.",
            "4xx are the clients' mistakes, not the server's: the deployment may need no change, but the users behind those requests got no answer.",
        ),
        R::AlignClientTimeouts => r(
            "Give clients a deadline their answers can meet",
            "About {n} requests ({share} of the requests that finished or hung up) were answered 2xx but never finished in the engine: their clients hung up before the answer was complete.",
            "Compare the clients' time-out with the longest answers they ask for. Here answers start after {ttft} (mean) and then stream at about {rate} tokens per second ({itl} per token, mean): a 2 s deadline fits answers of up to about {in2} tokens, 10 s about {in10}, 60 s about {in60}. Raise the time-out{or_lower} (vLLM records max_tokens only for requests that finish, so the requests cut off are not in its histogram); vLLM stops a request when its client goes, so the cost is answers users never saw.",
            "The figure is an estimate (HTTP 2xx on completion handlers minus finished requests); a proxy that retries can inflate it.",
        ),
        R::EnablePrefixCaching => r(
            "Turn prefix caching on",
            "Prefix caching is off ({off}), so every prompt is computed in full, the text requests share included. {shared}{budget}",
            "Start vLLM with --enable-prefix-caching (the V1 engine's default); requests that share a prefix then skip that part of prefill. Capture again and read the prefix-cache hit rate.",
            "If prompts share no text, caching changes nothing; it costs almost nothing either way.",
        ),
        R::RaiseMaxNumBatchedTokens => r(
            "Raise --max-num-batched-tokens: requests wait for the step's token budget",
            "{evidence}. {budget} With a mean prompt of {prompt} tokens, prefill is most of what the budget carries{chunks}.",
            "Start vLLM with --max-num-batched-tokens of at least {target}, so a mean prompt prefills in one step{check}; capture again and check that the waiting requests (vllm:num_requests_waiting_by_reason{reason=\"capacity\"}) and the queue time fall.",
            "Larger steps cost inter-token latency: a decode step that shares the engine with a {target}-token prefill takes longer (inter-token p95 now {itl}). If that objective tightens, lower it again or separate prefill from decode.",
        ),
        R::RemoveBlocksOverride => r(
            "Remove --num-gpu-blocks-override: it fixes the KV pool that runs out",
            "vllm:cache_config_info shows num_gpu_blocks_override={blocks}: the KV pool has that many blocks whatever the memory, and it {pressure}.",
            "Start vLLM without --num-gpu-blocks-override so the pool is sized from --gpu-memory-utilization; capture again before any other memory change (more memory does nothing while the override holds).",
            "The override is sometimes set on purpose (to share a GPU, or to reproduce a test); if so, keep it and treat the pool as fixed.",
        ),
    }
}

/// "a", "a or b", "a, b or c".
pub(crate) fn list_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [a] => a.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Fills `{name}` placeholders.
pub(crate) fn fill(template: &str, vars: &[(&str, String)]) -> String {
    let mut out = template.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fill_and_every_id_has_words() {
        assert_eq!(fill("a {x} b {x}", &[("x", "1".into())]), "a 1 b 1");
        for f in FindingId::ALL {
            let text = finding(*f);
            assert!(!text.explanation.is_empty(), "{f}");
        }
        for r in RecId::ALL {
            assert!(!rec(*r).title.is_empty(), "{r}");
        }
    }
}
