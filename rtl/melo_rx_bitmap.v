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
    reg  [1:0]       hop;
    reg  [PSN_W-1:0] harg, harg2;
    reg  [3*HW+1:0]  holes_next;
    always @* begin : hole_tracker
        reg [1:0] n, k;
        reg [4*HW-1:0] t;              // up to 4 holes while splitting
        reg [PSN_W-1:0] s, l, d;
        integer i, j, hit, total;
        n = holes[3*HW+1:3*HW];
        t = {{HW{1'b0}}, holes[3*HW-1:0]};
        holes_next = holes;
        case (hop)
        H_PUSH: begin  // a new hole above every tracked one; the oldest falls out when full
            if (n == HOLES) begin
                t = t >> HW;
                n = n - 1;
            end
            t[n*HW +: HW] = {harg2, harg};
            n = n + 1;
            holes_next = {n, t[3*HW-1:0]};
        end
        H_FILL: begin  // harg arrived: shrink or split the hole holding it
            hit = -1;
            for (i = 0; i < 3; i = i + 1) begin
                s = t[i*HW +: PSN_W]; l = t[i*HW+PSN_W +: PSN_W];
                if (hit < 0 && i < n && (harg - s) < l) hit = i;
            end
            if (hit >= 0) begin
                s = t[hit*HW +: PSN_W]; l = t[hit*HW+PSN_W +: PSN_W];
                if (l == 1) begin
                    for (j = 0; j < 3; j = j + 1)
                        if (j >= hit) t[j*HW +: HW] = t[(j+1)*HW +: HW];
                    n = n - 1;
                end else if (harg == s)
                    t[hit*HW +: HW] = {l - 1'b1, s + 1'b1};
                else if (harg == s + l - 1'b1)
                    t[hit*HW +: HW] = {l - 1'b1, s};
                else begin
                    // Split in two; if that makes one too many, the oldest is forgotten.
                    for (j = 3; j > 0; j = j - 1)
                        if (j > hit + 1) t[j*HW +: HW] = t[(j-1)*HW +: HW];
                    t[hit*HW +: HW] = {harg - s, s};
                    t[(hit+1)*HW +: HW] = {s + l - harg - 1'b1, harg + 1'b1};
                    total = n + 1;
                    if (total > HOLES) begin
                        t = t >> HW;
                        total = HOLES;
                    end
                    n = total;
                end
                holes_next = {n, t[3*HW-1:0]};
            end
        end
        H_ADVANCE: begin  // RCV.NXT moved to harg: holes below it are gone, one across it trimmed
            k = 0;
            for (i = 0; i < 3; i = i + 1)
                if (i < n) begin
                    s = t[i*HW +: PSN_W]; l = t[i*HW+PSN_W +: PSN_W];
                    d = harg - s;
                    if (before(s, harg) && d >= l) begin
                        // gone
                    end else begin
                        if (before(s, harg)) t[k*HW +: HW] = {l - d, harg};
                        else t[k*HW +: HW] = t[i*HW +: HW];
                        k = k + 1;
                    end
                end
            for (i = 0; i < 3; i = i + 1)
                if (i >= k) t[i*HW +: HW] = {HW{1'b0}};
            holes_next = {k, t[3*HW-1:0]};
        end
        default: ;
        endcase
    end

    // ---- the operation's datapath ----
    wire [BLOCK_BITS-1:0] cur_bits  = bits_mem[cur];
    wire [OFF_W:0]        zero_at   = first_zero(cur_bits, off(p));
    wire [PSN_W-1:0]      cur_base  = {cur_blk, {OFF_W{1'b0}}};
    wire [BLK_W-1:0]      last_blk  = blk(high - 1'b1);
    wire [CNT_W-1:0]      free_blocks = POOL_BLOCKS - avail_ptr;
    wire [PTR_W-1:0]      top_block = avail_mem[avail_ptr[PTR_W-1:0]];
    wire [BLOCK_BITS-1:0] psn_bit   = {{(BLOCK_BITS-1){1'b0}}, 1'b1} << off(psn);

    // Fill: which end of the list the PSN's bit lies in.
    wire in_first = blk(psn) == blk(nxt);
    wire in_last  = blk(psn) == last_blk;
    wire [PTR_W-1:0] fill_block = in_first ? start : last;
    wire [BLOCK_BITS-1:0] fill_bits = bits_mem[fill_block];
    // Append: blocks to allocate so the list reaches blk(psn).
    wire [BLK_W-1:0] append_need = has_list ? blk(psn) - last_blk : blk(psn) - blk(nxt) + 1'b1;

    // The slot a freed block goes to: the new top.
`ifdef MELO_BUG_STACK_SLOT
    wire [CNT_W-1:0] free_slot = avail_ptr;
`else
    wire [CNT_W-1:0] free_slot = avail_ptr - 1'b1;
`endif

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
            out_hole_list <= {holes_next[2*HW +: HW], holes_next[HW +: HW], holes_next[0 +: HW]};
            nxt_mem[c] <= f_nxt;
            high_mem[c] <= f_high;
            start_mem[c] <= f_start;
            end_mem[c] <= f_last;
            holes_mem[c] <= holes_next;
            state <= S_IDLE;
        end
    endtask

    // Which hole update the current clock applies (only in the clock that finishes).
    always @* begin
        hop = H_NONE; harg = psn; harg2 = {PSN_W{1'b0}};
        if (state == S_EXEC && !before(psn, nxt) && psn != nxt && before(psn, high)
                && (in_first || in_last) && !fill_bits[off(psn)])
            hop = H_FILL;
        else if (((state == S_EXEC && append_need <= free_blocks) || state == S_ALLOC)
                 && !before(psn, high) && psn != high) begin
            hop = H_PUSH; harg = high; harg2 = psn - high;
        end
        if (state == S_DRAIN) begin
            hop = H_ADVANCE;
            harg = (has_list && blk(p) == cur_blk && zero_at != BLOCK_BITS) ? cur_base + zero_at : p;
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
            if (init_i < POOL_BLOCKS) avail_mem[init_i[PTR_W-1:0]] <= init_i[PTR_W-1:0];
            if (init_i < CONNS) begin
                nxt_mem[init_i[CONN_W-1:0]] <= 0;
                high_mem[init_i[CONN_W-1:0]] <= 0;
                holes_mem[init_i[CONN_W-1:0]] <= 0;
            end
            init_i <= init_i + 1'b1;
            if (init_i == INIT_N - 1) state <= S_IDLE;
        end
        S_IDLE: if (in_valid) begin
            c <= in_conn;
            psn <= in_psn;
            nxt <= nxt_mem[in_conn];
            high <= high_mem[in_conn];
            start <= start_mem[in_conn];
            last <= end_mem[in_conn];
            holes <= holes_mem[in_conn];
            has_list <= nxt_mem[in_conn] != high_mem[in_conn];
            state <= S_EXEC;
        end
        S_EXEC: begin
            if (before(psn, nxt))
                finish(A_OLD, 1'b0, nxt, high, start, last, avail_ptr);
            else if (psn == nxt) begin
                // In order: drain from psn + 1, starting at the list's first block.
                p <= psn + 1'b1;
                cur <= start;
                cur_blk <= blk(nxt);
                state <= S_DRAIN;
            end else if (before(psn, high)) begin
                if (!in_first && !in_last)
                    finish(A_DROP_MIDDLE, 1'b0, nxt, high, start, last, avail_ptr);
                else if (fill_bits[off(psn)])
                    finish(A_REPEAT, 1'b0, nxt, high, start, last, avail_ptr);
                else begin
                    bits_mem[fill_block] <= fill_bits | psn_bit;
                    finish(A_FILL, 1'b0, nxt, high, start, last, avail_ptr);
                end
            end else if (append_need > free_blocks)
                finish(A_DROP_NO_BLOCK, 1'b0, nxt, high, start, last, avail_ptr);
            else if (append_need == 0) begin
                bits_mem[last] <= bits_mem[last] | psn_bit;
                finish(A_APPEND, psn != high, nxt, psn + 1'b1, start, last, avail_ptr);
            end else begin
                need <= append_need;
                state <= S_ALLOC;
            end
        end
        S_ALLOC: begin
            // Pop one block off the stack top and link it after the list's last block.
            avail_ptr <= avail_ptr + 1'b1;
            bits_mem[top_block] <= need == 1 ? psn_bit : {BLOCK_BITS{1'b0}};
            if (has_list) next_mem[last] <= top_block;
            else start <= top_block;
            last <= top_block;
            has_list <= 1'b1;
            need <= need - 1'b1;
            if (need == 1)
                finish(A_APPEND, psn != high, nxt, psn + 1'b1, has_list ? start : top_block, top_block, avail_ptr + 1'b1);
        end
        S_DRAIN: begin
            if (!has_list)
                finish(A_INORDER, 1'b0, p, before(high, p) ? p : high, start, last, avail_ptr);
            else if (blk(p) != cur_blk) begin
                // The drain passed the whole block: back onto the stack top.
                avail_ptr <= avail_ptr - 1'b1;
                avail_mem[free_slot[PTR_W-1:0]] <= cur;
                if (cur_blk == last_blk) has_list <= 1'b0;
                else begin
                    cur <= next_mem[cur];
                    start <= next_mem[cur];
                    cur_blk <= cur_blk + 1'b1;
                end
            end else if (zero_at == BLOCK_BITS)
                p <= cur_base + BLOCK_BITS;
            else if (cur_base + zero_at == high) begin
                // Everything received is delivered: the last block goes back too.
                avail_ptr <= avail_ptr - 1'b1;
                avail_mem[free_slot[PTR_W-1:0]] <= cur;
                finish(A_INORDER, 1'b0, high, high, start, last, avail_ptr - 1'b1);
            end else
                finish(A_INORDER, 1'b0, cur_base + zero_at, high, cur, last, avail_ptr);
        end
        default: state <= S_IDLE;
        endcase
    end
endmodule
