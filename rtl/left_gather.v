// LEFT's packet scheduler and gather FIFOs (Huang et al., "LEFT: LightwEight and FasT packet
// Reordering for RDMA", APNet'24; slides "Overview of LEFT", "Packet Scheduler", "Gather FIFOs").
//
// Must match, call for call, retx's model LeftNic (crates/retx/src/transport/loss/left/nic.rs:
// record, observe, handle_timeout, close_for, release), as recorded by
// crates/retx/src/hw/left_gather_trace.rs and checked by crates/retx/tests/it/left_gather_cosim.rs.
//
// Structures:
//   degree[CONNS]          each connection's disorder degree: an exponentially weighted mean of
//                          its packets' disorder (distance above RCV.NXT, saturating at 2^20),
//                          gain 1/8, in 1/16 packets (a shift and an add per packet)
//   FIFOS gather FIFOs     owner (a connection, valid bit), fill, opened (the time of its first
//                          packet: its age timer is now - opened), and DEPTH entries (packet
//                          indices) in ent_mem
// Operations (in_op), valid/ready handshake:
//   0 packet(conn, now, front, index, cached): the scheduler's decision. Fast path (the packet's
//     bit is set at once by the pool) when VARIANT is MELO+, or (LEFT) the connection is in a
//     loop register (in_cached, the pool's answer), or its degree before this packet is below
//     CONN_THRESHOLD packets, or the packet's disorder is below THRESHOLD; LEFT- gathers every
//     packet. The degree then moves toward the packet's disorder. A gathered packet goes into
//     the connection's FIFO, else the lowest free one (opened = now), else the oldest is closed
//     to make room (out_evict: its owner, which has a batch to record) and taken; a FIFO that
//     reaches DEPTH packets closes.
//   1 observe(conn, front, index): an in-order packet; only the degree moves (toward 0).
//   2 tick(now): every FIFO whose age has reached TIMEOUT closes (lowest index first).
//   3 close_for(conn): the connection's hole timer; its FIFO, if any, closes.
//   4 release(conn): the connection finished; its FIFO is freed (the packets dropped) and its
//     degree reset.
// A closing FIFO hands its packets on in order, one a clock, on batch_valid/batch_conn/
// batch_index (to the pool, which records them after one bring-in); out_batch_count and
// out_batch_hash (h = 31 h + index, mod 2^32, over the closed packets in order) summarise them.
// out_valid pulses once per operation with: out_fast, the connection's degree after it, the FIFO
// the packet went into or the one closed or freed (out_fifo_valid, out_fifo) and its fill after,
// the evicted connection, out_closed (a bit per FIFO that closed), and the NIC's next FIFO
// deadline (min opened + TIMEOUT over open FIFOs; out_deadline_valid low when none is open).
//
// Timing: an operation is latched at the edge that accepts it; the next clock decides (the
// scheduler's test, the degree update, the FIFO lookups by priority encoders, and the oldest
// FIFO by a comparator tree over the opened times) and, for a packet that is not evicting,
// pushes it; a closing FIFO then drains one packet per clock, an eviction's push comes after
// the evicted FIFO's drain; the operation's outputs are registered at the closing edge, which
// also accepts the next operation. So 2 clocks per operation (fast path, a push, an observe, a
// tick that closes nothing), plus the packets drained, plus 1 for a push after an eviction.
// The model charges the unit nothing (its FIFO work is off the pool's path); the batch's
// recording is charged by the pool (rtl/left_pool.v). No timing analysis has been done.
//
// `define LEFT_GATHER_BUG_OLDEST plants a bug for the co-simulation's self-test: the newest FIFO
// is closed to make room instead of the oldest. LEFT_GATHER_BUG_GAIN: the degree moves 1/4 of the
// way instead of 1/8. LEFT_GATHER_BUG_AGE: a FIFO times out only once its age exceeds TIMEOUT
// (the model closes it when the age reaches it).

module left_gather #(
    parameter FIFOS          = 8,        // gather FIFOs (slides: 8), at most 32 here
    parameter DEPTH          = 8,        // gather_packets: packets that close a FIFO
    parameter CONNS          = 16,
    parameter VARIANT        = 0,        // 0 LEFT, 1 LEFT- (no scheduler), 2 MELO+ (no FIFOs)
    parameter THRESHOLD      = 32,       // disorder_threshold, packets
    parameter CONN_THRESHOLD = 0,        // connection_threshold, packets (0: no such test)
    parameter [63:0] TIMEOUT = 2000000,  // gather_timeout, in the time unit of in_now (ps)
    parameter IDX_W          = 32,       // packet index width
    parameter TIME_W         = 48        // time width (ps: 48 bits are 281 s)
) (
    input  wire                 clk,
    input  wire                 rst,
    input  wire                 in_valid,
    output wire                 in_ready,
    input  wire [2:0]           in_op,
    input  wire [CONN_W-1:0]    in_conn,
    input  wire [TIME_W-1:0]    in_now,
    input  wire [IDX_W-1:0]     in_front,
    input  wire [IDX_W-1:0]     in_index,
    input  wire                 in_cached,
    output reg                  out_valid,
    output reg                  out_fast,
    output reg  [DEG_W-1:0]     out_degree,
    output reg                  out_fifo_valid,
    output reg  [FI_W-1:0]      out_fifo,
    output reg  [CNT_W-1:0]     out_fill,
    output reg                  out_evict_valid,
    output reg  [CONN_W-1:0]    out_evict,
    output reg  [FIFOS-1:0]     out_closed,
    output reg  [15:0]          out_batch_count,
    output reg  [31:0]          out_batch_hash,
    output reg                  out_deadline_valid,
    output reg  [TIME_W-1:0]    out_deadline,
    output reg                  batch_valid,
    output reg  [CONN_W-1:0]    batch_conn,
    output reg  [IDX_W-1:0]     batch_index
);
    localparam CONN_W = CONNS > 1 ? $clog2(CONNS) : 1;
    localparam FI_W   = FIFOS > 1 ? $clog2(FIFOS) : 1;
    localparam CNT_W  = $clog2(DEPTH + 1);
    localparam DEG_FRAC = 4;                       // the degree in 1/16 packets
`ifdef LEFT_GATHER_BUG_GAIN
    localparam DEG_GAIN = 2;
`else
    localparam DEG_GAIN = 3;                       // gain 1/8
`endif
    localparam DEG_MAX = 1 << 20;                  // packets of disorder one sample counts at most
    localparam DEG_W  = 20 + DEG_FRAC + 1;
    localparam [DEG_W-1:0] CONN_THR = CONN_THRESHOLD << DEG_FRAC;

    localparam S_IDLE = 3'd0, S_DECIDE = 3'd1, S_PUSH = 3'd2, S_DRAIN = 3'd3, S_DONE = 3'd4;
    // After a drain: finish, push the packet (an eviction), or drain the next timed-out FIFO.
    localparam C_DONE = 2'd0, C_PUSH = 2'd1, C_TICK = 2'd2;

    reg [2:0] state;
    reg [1:0] cont;
    assign in_ready = state == S_IDLE || state == S_DONE;

    // The operation.
    reg [2:0]        op;
    reg [CONN_W-1:0] conn;
    reg [TIME_W-1:0] now;
    reg [IDX_W-1:0]  front, index;
    reg              cached;

    // State.
    reg [DEG_W-1:0]  degree [0:CONNS-1];
    reg [FIFOS-1:0]  own_valid;
    reg [CONN_W-1:0] own     [0:FIFOS-1];
    reg [CNT_W-1:0]  fill    [0:FIFOS-1];
    reg [TIME_W-1:0] opened  [0:FIFOS-1];
    reg [IDX_W-1:0]  ent_mem [0:FIFOS*DEPTH-1];

    // The operation's working registers.
    reg              r_fast;
    reg              r_fifo_valid;
    reg [FI_W-1:0]   r_fifo;           // the FIFO pushed into, closed or freed
    reg              r_evict_valid;
    reg [CONN_W-1:0] r_evict;
    reg [FIFOS-1:0]  r_closed;
    reg [FIFOS-1:0]  pending;          // tick: timed-out FIFOs not yet drained
    reg [15:0]       r_count;
    reg [31:0]       r_hash;
    reg [FI_W-1:0]   d;                // the FIFO draining
    reg [CNT_W-1:0]  k;                // its next entry

    // ---- Combinational: the scheduler's test and the degree's next value.
    wire [IDX_W-1:0] disorder = index - front;
    wire [DEG_W-1:0] sample = (disorder >= DEG_MAX ? DEG_MAX : disorder[20:0]) << DEG_FRAC;
    wire [DEG_W-1:0] deg = degree[conn];
    wire [DEG_W-1:0] deg_next = sample >= deg ? deg + ((sample - deg) >> DEG_GAIN)
                                              : deg - ((deg - sample) >> DEG_GAIN);
    wire fast = VARIANT == 2 ? 1'b1 : VARIANT == 1 ? 1'b0
              : (cached || deg < CONN_THR || disorder < THRESHOLD);

    // ---- Combinational: the FIFO lookups (lowest index first) and the oldest open FIFO.
    reg              hit;
    reg [FI_W-1:0]   hit_f;
    reg              free_any;
    reg [FI_W-1:0]   free_f;
    reg [FI_W-1:0]   old_f;
    reg [TIME_W-1:0] old_t;
    reg              dl_valid;
    reg [TIME_W-1:0] dl_t;
    reg [FIFOS-1:0]  expired;
    reg [FI_W-1:0]   next_pending;
    integer f;
    always @* begin
        hit = 0; hit_f = 0; free_any = 0; free_f = 0; old_f = 0; old_t = 0; dl_valid = 0; dl_t = 0;
        expired = 0; next_pending = 0;
        for (f = FIFOS - 1; f >= 0; f = f - 1) begin
            if (own_valid[f] && own[f] == conn) begin hit = 1; hit_f = f; end
            if (!own_valid[f]) begin free_any = 1; free_f = f; end
            if (pending[f]) next_pending = f;
        end
        // The oldest: the first of the least opened times (Rust's min_by_key); only asked when
        // every FIFO is open.
        for (f = 0; f < FIFOS; f = f + 1) begin
`ifdef LEFT_GATHER_BUG_OLDEST
            if (f == 0 || opened[f] >= old_t) begin old_f = f; old_t = opened[f]; end
`else
            if (f == 0 || opened[f] < old_t) begin old_f = f; old_t = opened[f]; end
`endif
            if (own_valid[f] && (!dl_valid || opened[f] < dl_t)) begin dl_valid = 1; dl_t = opened[f]; end
`ifdef LEFT_GATHER_BUG_AGE
            expired[f] = own_valid[f] && opened[f] + TIMEOUT < now;
`else
            expired[f] = own_valid[f] && opened[f] + TIMEOUT <= now;
`endif
        end
    end

    wire [FI_W-1:0] push_f = r_fifo;
    wire [CNT_W-1:0] push_fill = fill[push_f];
    wire [IDX_W-1:0] drain_entry = ent_mem[d * DEPTH + k];

    integer c;
    always @(posedge clk) begin
        out_valid <= 0;
        batch_valid <= 0;
        if (rst) begin
            state <= S_IDLE;
            own_valid <= 0;
            pending <= 0;
            for (c = 0; c < CONNS; c = c + 1) degree[c] <= 0;
            for (c = 0; c < FIFOS; c = c + 1) begin fill[c] <= 0; opened[c] <= 0; own[c] <= 0; end
        end else begin
            case (state)
            S_DECIDE: begin
                case (op)
                3'd0: begin                                  // packet
                    degree[conn] <= deg_next;
                    r_fast <= fast;
                    if (fast) state <= S_DONE;
                    else if (hit) begin r_fifo_valid <= 1; r_fifo <= hit_f; state <= S_PUSH; end
                    else if (free_any) begin r_fifo_valid <= 1; r_fifo <= free_f; state <= S_PUSH; end
                    else begin                               // close the oldest to make room
                        r_fifo_valid <= 1; r_fifo <= old_f;
                        r_evict_valid <= 1; r_evict <= own[old_f];
                        d <= old_f; k <= 0; cont <= C_PUSH; state <= S_DRAIN;
                    end
                end
                3'd1: begin                                  // observe
                    degree[conn] <= deg_next;
                    r_fast <= 1;
                    state <= S_DONE;
                end
                3'd2: begin                                  // tick
                    pending <= expired;
                    state <= expired != 0 ? S_DRAIN : S_DONE;
                    for (c = FIFOS - 1; c >= 0; c = c - 1) if (expired[c]) d <= c;
                    k <= 0; cont <= C_TICK;
                end
                3'd3: begin                                  // close_for
                    r_fifo_valid <= hit; r_fifo <= hit_f;
                    d <= hit_f; k <= 0; cont <= C_DONE;
                    state <= hit ? S_DRAIN : S_DONE;
                end
                default: begin                               // release
                    r_fifo_valid <= hit; r_fifo <= hit_f;
                    if (hit) begin own_valid[hit_f] <= 0; fill[hit_f] <= 0; end
                    degree[conn] <= 0;
                    state <= S_DONE;
                end
                endcase
            end
            S_PUSH: begin
                if (!own_valid[push_f]) begin
                    own_valid[push_f] <= 1; own[push_f] <= conn; opened[push_f] <= now;
                end
                ent_mem[push_f * DEPTH + push_fill] <= index;
                fill[push_f] <= push_fill + 1;
                if (push_fill + 1 >= DEPTH) begin            // full: it closes
                    d <= push_f; k <= 0; cont <= C_DONE; state <= S_DRAIN;
                end else state <= S_DONE;
            end
            S_DRAIN: begin
                batch_valid <= 1; batch_conn <= own[d]; batch_index <= drain_entry;
                r_hash <= (r_hash << 5) - r_hash + drain_entry[31:0];   // 31 h + index: no multiplier
                r_count <= r_count + 1;
                k <= k + 1;
                if (k + 1 >= fill[d]) begin                  // the last entry: the FIFO is free
                    own_valid[d] <= 0; fill[d] <= 0; r_closed[d] <= 1;
                    case (cont)
                    C_PUSH: state <= S_PUSH;
                    C_TICK: begin
                        pending[d] <= 0;
                        k <= 0;
                        state <= S_DONE;
                        for (c = FIFOS - 1; c >= 0; c = c - 1)
                            if (pending[c] && c != d) begin d <= c; state <= S_DRAIN; end
                    end
                    default: state <= S_DONE;
                    endcase
                end
            end
            default: ;
            endcase

            // Finishing (S_DONE) registers the outputs from the state the operation left;
            // the same edge may accept the next operation.
            if (state == S_DONE) begin
                out_valid <= 1;
                out_fast <= r_fast;
                out_degree <= op == 3'd2 ? 0 : degree[conn];
                out_fifo_valid <= r_fifo_valid; out_fifo <= r_fifo;
                out_fill <= r_fifo_valid ? fill[r_fifo] : 0;
                out_evict_valid <= r_evict_valid; out_evict <= r_evict;
                out_closed <= r_closed;
                out_batch_count <= r_count; out_batch_hash <= r_hash;
                out_deadline_valid <= dl_valid; out_deadline <= dl_t + TIMEOUT;
                state <= S_IDLE;
            end
            if (in_ready && in_valid) begin
                op <= in_op; conn <= in_conn; now <= in_now; front <= in_front; index <= in_index;
                cached <= in_cached;
                r_fast <= 0; r_fifo_valid <= 0; r_fifo <= 0; r_evict_valid <= 0; r_evict <= 0;
                r_closed <= 0; r_count <= 0; r_hash <= 0;
                state <= S_DECIDE;
            end
        end
    end
endmodule
