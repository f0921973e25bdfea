/* mw-sizes.c — the defaults of what each firmware link defines in its own
 * object (instrumenter/firmware.ts): the firmware's name and path, the
 * buffer, the shadow stack and the block table at the sizes of the --mw-
 * options.  Weak, so that object's definitions win; alone in this file, so
 * that no other file of the runtime can fold a default's value into its code
 * (a const array's length, an empty name) where the link's own must be read.
 */
#include "../mw-internal.h"

#define MW_WEAK __attribute__((weak))
MW_WEAK const char mw_program_path[] = "";
MW_WEAK const char mw_program_cwd[] = "";
MW_WEAK const char mw_trace_stem[] = "firmware";
MW_WEAK unsigned char mw_buffer[MW_CHUNK_HEAD + MW_DEFAULT_BUFFER] __attribute__((aligned(8)));
MW_WEAK const unsigned mw_buffer_bytes = MW_DEFAULT_BUFFER;
MW_WEAK struct mw_frame_slot mw_frame_slots[MW_DEFAULT_FRAMES + 1];
MW_WEAK const unsigned mw_frame_cap = MW_DEFAULT_FRAMES;
MW_WEAK struct mw_live_slot mw_block_slots[MW_DEFAULT_BLOCKS];
MW_WEAK const unsigned mw_block_cap = MW_DEFAULT_BLOCKS; /* a power of two */
