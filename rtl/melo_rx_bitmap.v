// MELO receiver bitmap manager (Lu et al., "Memory Efficient Loss Recovery for Hardware-based
// Transport in Datacenter", APNet'17, section 3.2.3-3.2.5).
//
// Must match, operation for operation, retx's model: MeloReceiver::on_data
// (crates/retx/src/transport/melo.rs) on the NIC's BitsPool / ConnBitmap
// (crates/retx/src/hw/bits_pool.rs), as traced by `retx trace melo`
// (crates/retx/src/observe/hw_trace.rs) and checked by tests/python/test_rtl_cosim.py.
//
// Structures (on-chip, one copy per NIC):
//   bits_mem[POOL_BLOCKS]  the shared bits pool, BLOCK_BITS bits per block
//   next_mem[POOL_BLOCKS]  next_ptr of each block: a connection's blocks form a list
//   avail_mem[POOL_BLOCKS] the free-slot stack; entries at index >= avail_ptr are free blocks,
//                          allocated from and returned to the top (avail_ptr)
// and per connection: RCV.NXT, RCV.HIGH, start_ptr, end_ptr and the HOLES most recent holes.
// A connection's list covers blocks blk(RCV.NXT) .. blk(RCV.HIGH - 1) (blk(x) = x / BLOCK_BITS)
// and is empty exactly when RCV.HIGH = RCV.NXT, so no base or length is stored.
//
// One data packet (connection, PSN) per operation; PSNs are PSN_W bits and compared in serial
// arithmetic (window 2^(PSN_W-1)). Outcome (out_action):
//   0 in order: delivered; the bitmap drains behind it; blocks RCV.NXT passed are freed
//   1 append (PSN >= RCV.HIGH): blocks allocated up to the PSN's, all or nothing; a PSN above
//     RCV.HIGH opens a hole and sends a NACK (out_nack) with the most recent holes
//   2 fill: a hole filled in the first or last block       3 old: PSN < RCV.NXT
//   4 repeat: bit already set                               5 drop: middle block
//   6 drop: not enough free blocks
//
// Timing: NOT pipelined. One operation at a time (in_ready low while busy). A packet that is
// old, dropped, fills a hole or appends within the last block holds the unit 2 clocks (the
// accepting edge, then the decision edge, which registers the outputs: out_valid); an append
// 1 more per block it allocates; an in-order packet 3 clocks plus 1 per block its drain frees
// or crosses. (melo-fig5a at 1 % loss: 2.8 clocks per packet on average, 14 at most.) The
// paper claims a fully pipelined design (one packet per clock); that needs the
// per-connection state forwarded between back-to-back packets of one connection and the
// drain's block walk split from the packet pipeline, which this version does not attempt
// (docs/HARDWARE.md).
// After reset the free-slot stack and connection table are initialised, one entry per clock
// (max(POOL_BLOCKS, CONNS) clocks, in_ready low).
//
// `define MELO_BUG_STACK_SLOT plants a bug for the co-simulation's self-test: a freed block is
// written one slot above the stack top (the slot being vacated), not at the new top.

module melo_rx_bitmap #(
    parameter POOL_BLOCKS = 128,   // paper: 1 Kb pool in 1-byte blocks
    parameter BLOCK_BITS  = 8,     // power of two, >= 2
    parameter CONNS       = 4,
    parameter PSN_W       = 24,    // RoCEv2 PSN
    parameter HOLES       = 3      // holes a NACK carries (paper: 3), 1..3
) (
    input  wire                 clk,
    input  wire                 rst,
    input  wire                 in_valid,
    output wire                 in_ready,
    input  wire [CONN_W-1:0]    in_conn,
    input  wire [PSN_W-1:0]     in_psn,
    output reg                  out_valid,
    output reg  [2:0]           out_action,
    output reg                  out_nack,
    output reg  [PSN_W-1:0]     out_rcv_nxt,
    output reg  [PSN_W-1:0]     out_rcv_high,
    output reg  [CNT_W-1:0]     out_used_blocks,
    output reg  [CNT_W-1:0]     out_conn_blocks,
    output reg  [PTR_W-1:0]     out_start_ptr,
    output reg  [PTR_W-1:0]     out_end_ptr,
    output reg  [1:0]           out_holes,
    output reg  [3*2*PSN_W-1:0] out_hole_list   // {len2, start2, len1, start1, len0, start0}, oldest first
);
    localparam PTR_W  = POOL_BLOCKS > 1 ? $clog2(POOL_BLOCKS) : 1;
    localparam CNT_W  = $clog2(POOL_BLOCKS + 1);
    localparam CONN_W = CONNS > 1 ? $clog2(CONNS) : 1;
    localparam OFF_W  = $clog2(BLOCK_BITS);
    localparam BLK_W  = PSN_W - OFF_W;
    localparam INIT_N = POOL_BLOCKS > CONNS ? POOL_BLOCKS : CONNS;
    localparam HW     = 2 * PSN_W;               // one hole: {len, start}

    localparam S_INIT = 3'd0, S_IDLE = 3'd1, S_EXEC = 3'd2, S_ALLOC = 3'd3, S_DRAIN = 3'd4;

    localparam A_INORDER = 3'd0, A_APPEND = 3'd1, A_FILL = 3'd2, A_OLD = 3'd3,
               A_REPEAT = 3'd4, A_DROP_MIDDLE = 3'd5, A_DROP_NO_BLOCK = 3'd6;
    localparam H_NONE = 2'd0, H_PUSH = 2'd1, H_FILL = 2'd2, H_ADVANCE = 2'd3;

    // ---- memories ----
    reg [BLOCK_BITS-1:0] bits_mem  [0:POOL_BLOCKS-1];
    reg [PTR_W-1:0]      next_mem  [0:POOL_BLOCKS-1];
    reg [PTR_W-1:0]      avail_mem [0:POOL_BLOCKS-1];
    reg [CNT_W-1:0]      avail_ptr;
    reg [PSN_W-1:0]      nxt_mem   [0:CONNS-1];
    reg [PSN_W-1:0]      high_mem  [0:CONNS-1];
    reg [PTR_W-1:0]      start_mem [0:CONNS-1];
    reg [PTR_W-1:0]      end_mem   [0:CONNS-1];
    reg [3*HW+1:0]       holes_mem [0:CONNS-1];  // {count, hole2, hole1, hole0}

    // ---- the operation in flight ----
    reg [2:0]        state;
    reg [CNT_W-1:0]  init_i;
    reg [CONN_W-1:0] c;
    reg [PSN_W-1:0]  psn, nxt, high, p;
    reg [PTR_W-1:0]  start, last, cur;
    reg [BLK_W-1:0]  cur_blk, need;
    reg              has_list;
    reg [3*HW+1:0]   holes;

    assign in_ready = state == S_IDLE;

    // Serial-arithmetic order of PSNs: a before b.
    function before;
        input [PSN_W-1:0] a, b;
        reg [PSN_W-1:0] d;
        begin d = a - b; before = d[PSN_W-1]; end
    endfunction
    function [BLK_W-1:0] blk;
        input [PSN_W-1:0] x;
        blk = x[PSN_W-1:OFF_W];
    endfunction
    function [OFF_W-1:0] off;
        input [PSN_W-1:0] x;
        off = x[OFF_W-1:0];
    endfunction
    // The first zero bit of w at or above bit `from`; BLOCK_BITS when there is none.
    function [OFF_W:0] first_zero;
        input [BLOCK_BITS-1:0] w;
        input [OFF_W-1:0] from;
        integer i;
        reg found;
        begin
            first_zero = BLOCK_BITS; found = 0;
            for (i = 0; i < BLOCK_BITS; i = i + 1)
                if (!found && i >= from && !w[i]) begin first_zero = i; found = 1; end
        end
    endfunction

    // ---- the hole tracker (melo.rs Holes): push, fill, advance on {count, h2, h1, h0} ----
    // Entries are addressed with constant indices only (a variable part-select would build a
    // multiplier).
    reg  [1:0]       hop;
    reg  [PSN_W-1:0] harg, harg2;
    reg  [3*HW+1:0]  holes_next;
    always @* begin : hole_tracker
        reg [2:0] n, k;
        reg [4*HW-1:0] t, u;           // up to 4 holes while splitting
        reg [PSN_W-1:0] s, l, d, hs, hl;
        integer i, hit;
        n = holes[3*HW+1:3*HW];
        t = {{HW{1'b0}}, holes[3*HW-1:0]};
        u = t;
        holes_next = holes;
        hit = 3; hs = 0; hl = 0;
        case (hop)
        H_PUSH: begin  // a new hole above every tracked one; the oldest falls out when full
            if (n == HOLES) begin
                t = t >> HW;
                n = n - 1'b1;
            end
            for (i = 0; i < 3; i = i + 1)
                if (i == n) t[i*HW +: HW] = {harg2, harg};
            holes_next = {n[1:0] + 2'd1, t[3*HW-1:0]};
        end
        H_FILL: begin  // harg arrived: shrink or split the hole holding it
            for (i = 2; i >= 0; i = i - 1) begin
                s = t[i*HW +: PSN_W]; l = t[i*HW+PSN_W +: PSN_W];
                if (i < n && (harg - s) < l) begin hit = i; hs = s; hl = l; end
            end
            if (hit < 3) begin
                if (hl == 1) begin
                    for (i = 0; i < 3; i = i + 1)
                        if (i >= hit) u[i*HW +: HW] = t[(i+1)*HW +: HW];
                    n = n - 1'b1;
                end else if (harg == hs) begin
                    for (i = 0; i < 3; i = i + 1)
                        if (i == hit) u[i*HW +: HW] = {hl - 1'b1, hs + 1'b1};
                end else if (harg == hs + hl - 1'b1) begin
                    for (i = 0; i < 3; i = i + 1)
                        if (i == hit) u[i*HW +: HW] = {hl - 1'b1, hs};
                end else begin
                    // Split in two; if that makes one too many, the oldest is forgotten.
                    for (i = 0; i < 4; i = i + 1)
                        if (i == hit) u[i*HW +: HW] = {harg - hs, hs};
                        else if (i == hit + 1) u[i*HW +: HW] = {hs + hl - harg - 1'b1, harg + 1'b1};
                        else if (i > hit + 1) u[i*HW +: HW] = t[(i > 0 ? i - 1 : 0)*HW +: HW];
                    n = n + 1'b1;
                    if (n > HOLES) begin
                        u = u >> HW;
                        n = HOLES;
                    end
                end
                holes_next = {n[1:0], u[3*HW-1:0]};
            end
        end
        H_ADVANCE: begin  // RCV.NXT moved to harg: holes below it are gone, one across it trimmed
            k = 0;
            u = 0;
            for (i = 0; i < 3; i = i + 1)
                if (i < n) begin
                    s = t[i*HW +: PSN_W]; l = t[i*HW+PSN_W +: PSN_W];
                    d = harg - s;
                    // Kept entries move down to slot k (k <= i).
                    if (!(before(s, harg) && d >= l)) begin
                        if (k == 0) u[0 +: HW] = before(s, harg) ? {l - d, harg} : t[i*HW +: HW];
                        else if (k == 1) u[HW +: HW] = before(s, harg) ? {l - d, harg} : t[i*HW +: HW];
                        else u[2*HW +: HW] = before(s, harg) ? {l - d, harg} : t[i*HW +: HW];
                        k = k + 1'b1;
                    end
                end
            holes_next = {k[1:0], u[3*HW-1:0]};
        end
        default: ;
        endcase
    end

    // ---- what the operation in flight is, from its loaded state ----
    wire [BLOCK_BITS-1:0] cur_bits  = bits_mem[cur];
    wire [OFF_W:0]        zero_at   = first_zero(cur_bits, off(p));
    wire [PSN_W-1:0]      cur_base  = {cur_blk, {OFF_W{1'b0}}};
    wire [BLK_W-1:0]      last_blk  = blk(high - 1'b1);
    wire [CNT_W-1:0]      free_blocks = POOL_BLOCKS - avail_ptr;
    wire [PTR_W-1:0]      top_block = avail_mem[avail_ptr[PTR_W-1:0]];
    wire [BLOCK_BITS-1:0] psn_bit   = {{(BLOCK_BITS-1){1'b0}}, 1'b1} << off(psn);
    wire in_first = blk(psn) == blk(nxt);
    wire in_last  = blk(psn) == last_blk;
    wire [PTR_W-1:0]      fill_block = in_first ? start : last;
    wire [BLOCK_BITS-1:0] fill_bits  = bits_mem[fill_block];
    // Append: blocks to allocate so that the list reaches blk(psn).
    wire [BLK_W-1:0] append_need = has_list ? blk(psn) - last_blk : blk(psn) - blk(nxt) + 1'b1;

    wire is_old      = before(psn, nxt);
    wire is_inorder  = !is_old && psn == nxt;
    wire in_holes    = !is_old && !is_inorder && before(psn, high);
    wire is_middle   = in_holes && !in_first && !in_last;
    wire is_repeat   = in_holes && !is_middle && fill_bits[off(psn)];
    wire is_fill     = in_holes && !is_middle && !is_repeat;
    wire is_append   = !is_old && !is_inorder && !in_holes;
    wire is_no_block = is_append && append_need > free_blocks;
    wire exec        = state == S_EXEC;

    // Drain (in order): the cursor p's block is cur, first zero at zero_at.
    wire drain_past  = has_list && blk(p) != cur_blk;                 // cur wholly delivered
    wire drain_stop  = has_list && !drain_past && zero_at != BLOCK_BITS;
    wire [PSN_W-1:0] drain_front = cur_base + zero_at;
    wire drain_all   = drain_stop && drain_front == high;              // the last block goes too
    wire drain_free  = state == S_DRAIN && (drain_past || drain_all);

    // One write port per pool memory.
    wire bits_we = exec && (is_fill || (is_append && !is_no_block && append_need == 0)) || state == S_ALLOC;
    wire [PTR_W-1:0] bits_wa = state == S_ALLOC ? top_block : is_fill ? fill_block : last;
    wire [BLOCK_BITS-1:0] bits_wd = state == S_ALLOC ? (need == 1 ? psn_bit : {BLOCK_BITS{1'b0}})
                                  : (is_fill ? fill_bits : bits_mem[last]) | psn_bit;
    // The slot a freed block goes to: the new top.
`ifdef MELO_BUG_STACK_SLOT
    wire [CNT_W-1:0] free_slot = avail_ptr;
`else
    wire [CNT_W-1:0] free_slot = avail_ptr - 1'b1;
`endif
    wire avail_we = (state == S_INIT && init_i < POOL_BLOCKS) || drain_free;
    wire [PTR_W-1:0] avail_wa = state == S_INIT ? init_i[PTR_W-1:0] : free_slot[PTR_W-1:0];
    wire [PTR_W-1:0] avail_wd = state == S_INIT ? init_i[PTR_W-1:0] : cur;

    // Which hole update the finishing clock applies.
    always @* begin
        hop = H_NONE; harg = psn; harg2 = {PSN_W{1'b0}};
        if (exec && is_fill)
            hop = H_FILL;
        else if (((exec && is_append && !is_no_block) || state == S_ALLOC) && psn != high) begin
            hop = H_PUSH; harg = high; harg2 = psn - high;
        end else if (state == S_DRAIN) begin
            hop = H_ADVANCE;
            harg = drain_stop ? drain_front : p;
        end
    end

    // The connection's state is written back from the output registers in the clock after an
    // operation finishes; an operation accepted in that clock on the same connection takes it
    // from there (one write port per connection memory).
    wire wb = out_valid;
    wire fwd = wb && in_conn == c;

    task finish;
        input [2:0] action;
        input       nack;
        input [PSN_W-1:0] f_nxt, f_high;
        input [PTR_W-1:0] f_start, f_last;
        input [CNT_W-1:0] f_used;
        begin
            out_valid <= 1'b1;
            out_action <= action;
            out_nack <= nack;
            out_rcv_nxt <= f_nxt;
            out_rcv_high <= f_high;
            out_used_blocks <= f_used;
            out_conn_blocks <= f_high == f_nxt ? {CNT_W{1'b0}} : blk(f_high - 1'b1) - blk(f_nxt) + 1'b1;
            out_start_ptr <= f_start;
            out_end_ptr <= f_last;
            out_holes <= holes_next[3*HW+1:3*HW];
            out_hole_list <= holes_next[3*HW-1:0];
            state <= S_IDLE;
        end
    endtask

    always @(posedge clk) begin
        if (bits_we) bits_mem[bits_wa] <= bits_wd;
        if (avail_we) avail_mem[avail_wa] <= avail_wd;
        if (state == S_ALLOC && has_list) next_mem[last] <= top_block;
        if (wb || state == S_INIT && init_i < CONNS) begin
            nxt_mem[wb ? c : init_i[CONN_W-1:0]] <= wb ? out_rcv_nxt : {PSN_W{1'b0}};
            high_mem[wb ? c : init_i[CONN_W-1:0]] <= wb ? out_rcv_high : {PSN_W{1'b0}};
            start_mem[wb ? c : init_i[CONN_W-1:0]] <= out_start_ptr;
            end_mem[wb ? c : init_i[CONN_W-1:0]] <= out_end_ptr;
            holes_mem[wb ? c : init_i[CONN_W-1:0]] <= wb ? {out_holes, out_hole_list} : {(3*HW+2){1'b0}};
        end
    end

    always @(posedge clk) begin
        out_valid <= 1'b0;
        if (rst) begin
            state <= S_INIT;
            init_i <= 0;
            avail_ptr <= 0;
        end else case (state)
        S_INIT: begin
            init_i <= init_i + 1'b1;
            if (init_i == INIT_N - 1) state <= S_IDLE;
        end
        S_IDLE: if (in_valid) begin
            c <= in_conn;
            psn <= in_psn;
            nxt <= fwd ? out_rcv_nxt : nxt_mem[in_conn];
            high <= fwd ? out_rcv_high : high_mem[in_conn];
            start <= fwd ? out_start_ptr : start_mem[in_conn];
            last <= fwd ? out_end_ptr : end_mem[in_conn];
            holes <= fwd ? {out_holes, out_hole_list} : holes_mem[in_conn];
            has_list <= fwd ? out_rcv_nxt != out_rcv_high : nxt_mem[in_conn] != high_mem[in_conn];
            state <= S_EXEC;
        end
        S_EXEC: begin
            if (is_old)
                finish(A_OLD, 1'b0, nxt, high, start, last, avail_ptr);
            else if (is_inorder) begin
                // Drain from psn + 1, starting at the list's first block.
                p <= psn + 1'b1;
                cur <= start;
                cur_blk <= blk(nxt);
                state <= S_DRAIN;
            end else if (is_middle)
                finish(A_DROP_MIDDLE, 1'b0, nxt, high, start, last, avail_ptr);
            else if (is_repeat)
                finish(A_REPEAT, 1'b0, nxt, high, start, last, avail_ptr);
            else if (is_fill)
                finish(A_FILL, 1'b0, nxt, high, start, last, avail_ptr);
            else if (is_no_block)
                finish(A_DROP_NO_BLOCK, 1'b0, nxt, high, start, last, avail_ptr);
            else if (append_need == 0)
                finish(A_APPEND, psn != high, nxt, psn + 1'b1, start, last, avail_ptr);
            else begin
                need <= append_need;
                state <= S_ALLOC;
            end
        end
        S_ALLOC: begin
            // Pop one block off the stack top and link it after the list's last block.
            avail_ptr <= avail_ptr + 1'b1;
            if (!has_list) start <= top_block;
            last <= top_block;
            has_list <= 1'b1;
            need <= need - 1'b1;
            if (need == 1)
                finish(A_APPEND, psn != high, nxt, psn + 1'b1, has_list ? start : top_block, top_block, avail_ptr + 1'b1);
        end
        S_DRAIN: begin
            if (!has_list)
                finish(A_INORDER, 1'b0, p, before(high, p) ? p : high, start, last, avail_ptr);
            else if (drain_past) begin
                // The drain passed the whole block: back onto the stack top.
                avail_ptr <= avail_ptr - 1'b1;
                if (cur_blk == last_blk) has_list <= 1'b0;
                else begin
                    cur <= next_mem[cur];
                    start <= next_mem[cur];
                    cur_blk <= cur_blk + 1'b1;
                end
            end else if (!drain_stop)
                p <= cur_base + BLOCK_BITS;
            else if (drain_all) begin
                // Everything received is delivered: the last block goes back too.
                avail_ptr <= avail_ptr - 1'b1;
                finish(A_INORDER, 1'b0, high, high, start, last, avail_ptr - 1'b1);
            end else
                finish(A_INORDER, 1'b0, drain_front, high, cur, last, avail_ptr);
        end
        default: state <= S_IDLE;
        endcase
    end
endmodule
