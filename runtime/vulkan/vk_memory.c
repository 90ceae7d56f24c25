/*
 * vk_memory.c — buffers and transfers.
 *
 * On a device with unified memory (integrated GPUs, CPU devices such as
 * lavapipe) a buffer lives in host-visible, coherent device memory, mapped
 * for its whole life, and a transfer is a memcpy. Elsewhere a buffer lives
 * in device-local memory and a transfer goes through one staging buffer per
 * device (grown on demand, up to STAGING_MAX; larger transfers go in
 * pieces) with a copy command, waited for; except a write of up to
 * UPLOAD_MAX, which is copied into the batch's upload memory and recorded
 * in the batch, in order with its launches, without a wait.
 * KCRT_VULKAN_STAGING=1 forces the staged path on any device, so that the
 * tests cover it on lavapipe.
 *
 * Ordering: every buffer remembers the last batch that uses it. A transfer
 * not recorded in the batch first waits for that batch (submitting it if
 * it is still being recorded), so a write never races a launch queued
 * before it and a read sees its results. Copies end with a barrier that makes their writes visible to
 * later dispatches, copies and the host.
 *
 * Reuse: freeing a buffer does not wait for the work that uses it. Its
 * memory becomes a spare, kept with that batch's serial, and a later
 * buffer of its size class takes it; what the new buffer does first is
 * ordered after the old work (a fill recorded in the batch, or a transfer
 * that waits). So a model's temporaries, made and freed between launches,
 * cost neither a wait nor an allocation once their sizes have been seen.
 */
#include "vk_private.h"

#include <stdlib.h>
#include <string.h>

/* A write of up to UPLOAD_MAX bytes into memory the host cannot map is
 * copied into the batch's upload chunks and recorded there, up to
 * BATCH_UPLOADS_MAX a batch; larger ones go through the staging buffer,
 * waited for. */
enum { STAGING_MAX = 16 << 20, UPLOAD_MAX = 4 << 20, BATCH_UPLOADS_MAX = 32 << 20 };

kcrt_status vk_mem_create(vk_dev *d, VkDeviceSize size, VkBufferUsageFlags usage, bool host, vk_mem *m)
{
    memset(m, 0, sizeof(*m));
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = size,
                             .usage = usage,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    kcrt_status s = vk_check(d, d->vkCreateBuffer(d->dev, &bi, NULL, &m->buf), "vkCreateBuffer");
    if (s != KCRT_OK)
        return s;
    VkMemoryRequirements req;
    d->vkGetBufferMemoryRequirements(d->dev, m->buf, &req);
    VkMemoryPropertyFlags coherent =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int type = host ? vk_memory_type(d, req.memoryTypeBits, coherent, VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                    : vk_memory_type(d, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
    if (type < 0 && !host)
        type = vk_memory_type(d, req.memoryTypeBits, 0, 0);
    if (type < 0) {
        vk_mem_free(d, m);
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "no Vulkan memory type fits a %s buffer",
                       host ? "host-visible" : "device");
    }
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                               .allocationSize = req.size,
                               .memoryTypeIndex = (uint32_t)type};
    s = vk_check(d, d->vkAllocateMemory(d->dev, &ai, NULL, &m->mem), "vkAllocateMemory");
    if (s == KCRT_OK)
        s = vk_check(d, d->vkBindBufferMemory(d->dev, m->buf, m->mem, 0), "vkBindBufferMemory");
    if (s == KCRT_OK && host)
        s = vk_check(d, d->vkMapMemory(d->dev, m->mem, 0, VK_WHOLE_SIZE, 0, &m->map), "vkMapMemory");
    if (s != KCRT_OK) {
        vk_mem_free(d, m);
        return rt_fail(d->ctx, s, "a buffer of %llu bytes: %s", (unsigned long long)size, d->ctx->err);
    }
    m->size = size;
    return KCRT_OK;
}

static const VkFormat texel_formats[RT_TEXEL_KINDS] = {
    [RT_TEXEL_R32F] = VK_FORMAT_R32_SFLOAT,         [RT_TEXEL_RGBA32F] = VK_FORMAT_R32G32B32A32_SFLOAT,
    [RT_TEXEL_R32I] = VK_FORMAT_R32_SINT,           [RT_TEXEL_RGBA32I] = VK_FORMAT_R32G32B32A32_SINT,
    [RT_TEXEL_R32UI] = VK_FORMAT_R32_UINT,          [RT_TEXEL_RGBA32UI] = VK_FORMAT_R32G32B32A32_UINT,
    [RT_TEXEL_RGBA16F] = VK_FORMAT_R16G16B16A16_SFLOAT,
};

/* The view covers the whole memory, up to the device's texel limit (the
 * launch checks that the buffer's own bytes fit: vk_exec.c). Every format
 * here supports uniform texel buffers on every Vulkan device. */
kcrt_status vk_texel_view(vk_dev *d, vk_mem *m, rt_texel t, VkBufferView *out)
{
    if (!m->views[t]) {
        VkDeviceSize texel = rt_texel_bytes(t), limit = (VkDeviceSize)d->caps.limits.maxTexelBufferElements * texel;
        VkDeviceSize range = m->size / texel * texel;
        VkBufferViewCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
                                     .buffer = m->buf,
                                     .format = texel_formats[t],
                                     .offset = 0,
                                     .range = range < limit ? range : limit};
        kcrt_status s = vk_check(d, d->vkCreateBufferView(d->dev, &ci, NULL, &m->views[t]), "vkCreateBufferView");
        if (s != KCRT_OK)
            return s;
    }
    *out = m->views[t];
    return KCRT_OK;
}

void vk_mem_free(vk_dev *d, vk_mem *m)
{
    for (int t = 0; t < RT_TEXEL_KINDS; t++)
        if (m->views[t])
            d->vkDestroyBufferView(d->dev, m->views[t], NULL);
    if (m->map)
        d->vkUnmapMemory(d->dev, m->mem);
    if (m->buf)
        d->vkDestroyBuffer(d->dev, m->buf, NULL);
    if (m->mem)
        d->vkFreeMemory(d->dev, m->mem, NULL);
    memset(m, 0, sizeof(*m));
}

/* ---- one-off copies ---------------------------------------------------------------------------- */

/* Everything later on the queue sees what a copy wrote. */
static void copy_done_barrier(vk_dev *d, VkCommandBuffer cmd)
{
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                                           VK_ACCESS_HOST_READ_BIT};
    d->vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                                VK_PIPELINE_STAGE_HOST_BIT,
                            0, 1, &mb, 0, NULL, 0, NULL);
}

/* Records one command with fn, submits it alone and waits. */
typedef void (*record_fn)(vk_dev *d, VkCommandBuffer cmd, const void *user);

static kcrt_status run_once(vk_dev *d, record_fn fn, const void *user)
{
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    kcrt_status s = vk_check(d, d->vkBeginCommandBuffer(d->xfer_cmd, &bi), "vkBeginCommandBuffer");
    if (s != KCRT_OK)
        return s;
    fn(d, d->xfer_cmd, user);
    copy_done_barrier(d, d->xfer_cmd);
    s = vk_check(d, d->vkEndCommandBuffer(d->xfer_cmd), "vkEndCommandBuffer");
    VkSubmitInfo si = {
        .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &d->xfer_cmd};
    if (s == KCRT_OK)
        s = vk_check(d, d->vkQueueSubmit(d->queue, 1, &si, d->xfer_fence), "vkQueueSubmit");
    if (s == KCRT_OK) {
        d->stats.transfer_submissions++;
        d->stats.waits++;
        s = vk_check(d, d->vkWaitForFences(d->dev, 1, &d->xfer_fence, VK_TRUE, UINT64_MAX),
                     "vkWaitForFences");
        if (s == KCRT_OK)
            s = vk_check(d, d->vkResetFences(d->dev, 1, &d->xfer_fence), "vkResetFences");
    }
    d->vkResetCommandBuffer(d->xfer_cmd, 0);
    return s;
}

typedef struct copy_op {
    VkBuffer src, dst;
    VkBufferCopy region;
} copy_op;

static void record_copy(vk_dev *d, VkCommandBuffer cmd, const void *user)
{
    const copy_op *c = user;
    d->vkCmdCopyBuffer(cmd, c->src, c->dst, 1, &c->region);
}

typedef struct fill_op {
    VkBuffer buf;
    VkDeviceSize size;
} fill_op;

static void record_fill(vk_dev *d, VkCommandBuffer cmd, const void *user)
{
    const fill_op *f = user;
    d->vkCmdFillBuffer(cmd, f->buf, 0, f->size, 0);
}

/* The staging buffer, at least `bytes` (up to STAGING_MAX) big. */
static kcrt_status staging(vk_dev *d, VkDeviceSize bytes)
{
    if (bytes > STAGING_MAX)
        bytes = STAGING_MAX;
    if (d->staging.size >= bytes)
        return KCRT_OK;
    VkDeviceSize size = 64 << 10;
    while (size < bytes)
        size *= 2;
    vk_mem_free(d, &d->staging);
    kcrt_status s = vk_mem_create(
        d, size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, true, &d->staging);
    d->stats.staging_bytes = d->staging.size;
    d->stats.staging_resizes++;
    return s;
}

/* ---- spares: the memory of freed buffers ------------------------------------------------------------ */

static void spare_remove(vk_dev *d, int i)
{
    d->stats.spare_bytes -= d->spares[i].m.size;
    memmove(&d->spares[i], &d->spares[i + 1], sizeof(vk_spare) * (size_t)(d->nspares - i - 1));
    d->nspares--;
}

/* A spare of that size, one no queued work uses if there is one (the index, or -1). */
static int spare_find(vk_dev *d, VkDeviceSize size, uint64_t completed)
{
    int busy = -1;
    for (int i = d->nspares - 1; i >= 0; i--)
        if (d->spares[i].m.size == size) {
            if (d->spares[i].serial <= completed)
                return i;
            busy = busy < 0 ? i : busy;
        }
    return busy;
}

/* Over the limit, the oldest spares are freed, after the work that uses
 * them (the only time freeing a buffer waits for the device). */
static void spares_trim(vk_dev *d)
{
    if (!d->spare_max)
        d->spare_max = rt_spare_limit(d->ctx->info.memory_bytes);
    while (d->nspares && d->stats.spare_bytes > d->spare_max) {
        vk_spare old = d->spares[0];
        spare_remove(d, 0);
        vk_wait_serial(d, old.serial);
        vk_mem_free(d, &old.m);
    }
}

static void spare_add(vk_dev *d, vk_mem m, uint64_t serial)
{
    if (d->nspares == d->spares_cap) {
        int cap = d->spares_cap ? 2 * d->spares_cap : 64;
        vk_spare *grown = realloc(d->spares, sizeof(vk_spare) * (size_t)cap);
        if (!grown) { /* keep nothing rather than fail a free */
            vk_wait_serial(d, serial);
            vk_mem_free(d, &m);
            return;
        }
        d->spares = grown, d->spares_cap = cap;
    }
    d->spares[d->nspares++] = (vk_spare){m, serial};
    d->stats.spare_bytes += m.size;
    spares_trim(d);
}

void vk_spares_free(vk_dev *d)
{
    for (int i = 0; i < d->nspares; i++)
        vk_mem_free(d, &d->spares[i].m);
    free(d->spares);
    d->spares = NULL;
    d->nspares = d->spares_cap = 0;
    d->stats.spare_bytes = 0;
}

/* New memory for a buffer; when the device has none left, again after
 * the spares are given back. */
static kcrt_status fresh_memory(vk_dev *d, VkDeviceSize size, vk_mem *m)
{
    VkBufferUsageFlags usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                               VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    kcrt_status s = vk_mem_create(d, size, usage, d->unified, m);
    if (s == KCRT_ERROR_OUT_OF_MEMORY && d->nspares) {
        vk_wait_serial(d, d->serial);
        vk_spares_free(d);
        s = vk_mem_create(d, size, usage, d->unified, m);
    }
    if (s == KCRT_OK)
        d->stats.buffer_allocations++;
    return s;
}

/* ---- the API's buffers ------------------------------------------------------------------------------- */

/* A new buffer gets a spare of its size class, one that queued work may
 * still use (it is ordered after that work: vk_zero_in_batch, and host
 * transfers wait for last_serial), or fresh memory. It holds zeros: at
 * once where memory is mapped and idle, else filled in the batch before
 * its first use (no submission, no wait), or never, where the host's first
 * write covers it. */
kcrt_status vk_buffer_create(void *dev, size_t bytes, void **out)
{
    vk_dev *d = dev;
    if (d->lost)
        return rt_fail(d->ctx, KCRT_ERROR_DEVICE_ERROR, "the Vulkan device was lost earlier");
    vk_buf *b = calloc(1, sizeof(*b));
    if (!b)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    VkDeviceSize size = rt_size_class(bytes);
    uint64_t completed = vk_completed(d);
    int i = spare_find(d, size, completed);
    if (i >= 0) {
        b->m = d->spares[i].m;
        b->last_serial = d->spares[i].serial > completed ? d->spares[i].serial : 0;
        spare_remove(d, i);
        d->stats.buffers_reused++;
    } else {
        kcrt_status s = fresh_memory(d, size, &b->m);
        if (s != KCRT_OK) {
            free(b);
            return s;
        }
    }
    b->bytes = bytes;
    if (b->m.map && !b->last_serial)
        memset(b->m.map, 0, size);
    else
        b->zero_pending = true;
    *out = b;
    return KCRT_OK;
}

/* A barrier before a transfer into b when batch bt has used b's memory:
 * earlier commands of the batch read or wrote it. (Earlier batches end
 * with a barrier that covers transfers.) */
static void before_transfer(vk_dev *d, vk_batch *bt, const vk_buf *b)
{
    if (b->last_serial != bt->serial)
        return;
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
    d->vkCmdPipelineBarrier(bt->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                            VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    d->stats.barriers++;
}

void vk_zero_in_batch(vk_dev *d, vk_batch *b, vk_buf *vb)
{
    before_transfer(d, b, vb); /* a freed buffer's memory, which this batch used before */
    d->vkCmdFillBuffer(b->cmd, vb->m.buf, 0, vb->m.size, 0);
    copy_done_barrier(d, b->cmd);
    d->stats.barriers++;
    vb->zero_pending = false;
    vb->last_serial = b->serial;
}

/* Before the host writes into (or hands out) a buffer no command has used
 * yet: memory no queued work uses (a busy spare goes back for one that is
 * idle, or fresh memory, rather than waiting), holding zeros unless the
 * host's write covers all of it. */
static kcrt_status settle(vk_dev *d, vk_buf *b, bool covered)
{
    if (!b->zero_pending)
        return KCRT_OK;
    uint64_t completed = vk_completed(d);
    if (b->last_serial > completed) {
        int i = spare_find(d, b->m.size, completed);
        vk_mem m = {0};
        if (i >= 0 && d->spares[i].serial <= completed) {
            m = d->spares[i].m;
            spare_remove(d, i);
            d->stats.buffers_reused++;
        } else if (fresh_memory(d, b->m.size, &m) != KCRT_OK) {
            m.buf = VK_NULL_HANDLE; /* then wait for the work instead */
        }
        if (m.buf) {
            spare_add(d, b->m, b->last_serial);
            b->m = m;
            b->last_serial = 0;
        }
    }
    kcrt_status s = vk_wait_serial(d, b->last_serial);
    if (s == KCRT_OK && !covered)
        s = b->m.map ? (memset(b->m.map, 0, b->m.size), KCRT_OK)
                     : run_once(d, record_fill, &(fill_op){b->m.buf, b->m.size});
    if (s == KCRT_OK)
        b->zero_pending = false;
    return s;
}

kcrt_status vk_buffer_native(void *dev, void *buf, void **native, int *device)
{
    vk_dev *d = dev;
    vk_buf *b = buf;
    kcrt_status s = settle(d, b, false); /* the host may use it outside kcrt */
    *native = (void *)(uintptr_t)b->m.buf;
    *device = d->index;
    return s;
}

/* The host's VkBuffer: never mapped here (its memory type is the
 * host's business), so transfers take the staged path, with copy commands. */
kcrt_status vk_buffer_wrap(void *dev, void *native, size_t bytes, void **out)
{
    vk_dev *d = dev;
    const kcrt_vulkan_buffer *h = native;
    if (d->lost)
        return rt_fail(d->ctx, KCRT_ERROR_DEVICE_ERROR, "the Vulkan device was lost earlier");
    if (!h->buffer)
        return rt_fail(d->ctx, KCRT_ERROR_BAD_ARGUMENT, "kcrt_buffer_wrap: the kcrt_vulkan_buffer has no VkBuffer");
    vk_buf *b = calloc(1, sizeof(*b));
    if (!b)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    b->m.buf = (VkBuffer)(uintptr_t)h->buffer;
    b->m.mem = (VkDeviceMemory)(uintptr_t)h->memory;
    b->m.size = bytes;
    b->bytes = bytes;
    b->wrapped = true;
    *out = b;
    return KCRT_OK;
}

/* The memory becomes a spare at once, without waiting for the work that
 * uses it; a wrapped buffer is the host's, who may free it when this
 * returns, so that work ends first. */
void vk_buffer_free(void *dev, void *buf)
{
    vk_dev *d = dev;
    vk_buf *b = buf;
    if (b->wrapped)
        vk_wait_serial(d, b->last_serial);
    else
        spare_add(d, b->m, b->last_serial);
    free(b);
}

/* The host's bytes, copied now into the batch's upload memory, reach b by
 * a copy recorded in the batch, in order with its launches: the write
 * returns without a submission or a wait (the bytes are already ours). */
static kcrt_status upload_in_batch(vk_dev *d, vk_batch *bt, vk_buf *b, size_t offset, const void *src, size_t bytes)
{
    vk_mem *chunk;
    VkDeviceSize at;
    kcrt_status s = vk_arena_space(d, &bt->uploads, bytes, 16, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, &chunk, &at);
    if (s != KCRT_OK)
        return s;
    memcpy((char *)chunk->map + at, src, bytes);
    if (b->zero_pending && !(offset == 0 && bytes >= b->bytes))
        vk_zero_in_batch(d, bt, b);
    else
        before_transfer(d, bt, b);
    b->zero_pending = false;
    VkBufferCopy region = {at, offset, bytes};
    d->vkCmdCopyBuffer(bt->cmd, chunk->buf, b->m.buf, 1, &region);
    copy_done_barrier(d, bt->cmd);
    d->stats.barriers++;
    b->last_serial = bt->serial;
    return KCRT_OK;
}

kcrt_status vk_buffer_write(void *dev, void *buf, size_t offset, const void *src, size_t bytes)
{
    vk_dev *d = dev;
    vk_buf *b = buf;
    /* not a wrapped buffer: the host sees its memory by other means, and
     * expects the bytes there when this returns */
    if (!b->m.map && !b->wrapped && bytes <= UPLOAD_MAX) {
        vk_batch *bt;
        kcrt_status s = vk_recording(d, &bt);
        if (s != KCRT_OK)
            return s;
        if (bt->uploads.given + bytes <= BATCH_UPLOADS_MAX)
            return upload_in_batch(d, bt, b, offset, src, bytes);
    }
    kcrt_status s = settle(d, b, offset == 0 && bytes >= b->bytes);
    if (s == KCRT_OK)
        s = vk_wait_serial(d, b->last_serial);
    if (s != KCRT_OK)
        return s;
    if (b->m.map) {
        memcpy((char *)b->m.map + offset, src, bytes);
        return KCRT_OK;
    }
    /* copies move whole words: pad a ragged piece with what the buffer holds */
    for (size_t done = 0; done < bytes && s == KCRT_OK;) {
        size_t lo = (offset + done) & ~(size_t)3;
        size_t n = bytes - done < STAGING_MAX - 8 ? bytes - done : STAGING_MAX - 8;
        size_t hi = (offset + done + n + 3) & ~(size_t)3;
        if ((s = staging(d, hi - lo)) != KCRT_OK)
            break;
        if (lo != offset + done || hi != offset + done + n) /* read the words at the edges first */
            s = run_once(d, record_copy, &(copy_op){b->m.buf, d->staging.buf, {lo, 0, hi - lo}});
        if (s != KCRT_OK)
            break;
        memcpy((char *)d->staging.map + (offset + done - lo), (const char *)src + done, n);
        s = run_once(d, record_copy, &(copy_op){d->staging.buf, b->m.buf, {0, lo, hi - lo}});
        done += n;
    }
    return s;
}

kcrt_status vk_buffer_read(void *dev, void *buf, size_t offset, void *dst, size_t bytes)
{
    vk_dev *d = dev;
    vk_buf *b = buf;
    if (b->zero_pending) { /* nothing has written it */
        memset(dst, 0, bytes);
        return KCRT_OK;
    }
    kcrt_status s = vk_wait_serial(d, b->last_serial);
    if (s != KCRT_OK)
        return s;
    if (b->m.map) {
        memcpy(dst, (const char *)b->m.map + offset, bytes);
        return KCRT_OK;
    }
    for (size_t done = 0; done < bytes && s == KCRT_OK;) {
        size_t lo = (offset + done) & ~(size_t)3;
        size_t n = bytes - done < STAGING_MAX - 8 ? bytes - done : STAGING_MAX - 8;
        size_t hi = (offset + done + n + 3) & ~(size_t)3;
        if ((s = staging(d, hi - lo)) != KCRT_OK)
            break;
        s = run_once(d, record_copy, &(copy_op){b->m.buf, d->staging.buf, {lo, 0, hi - lo}});
        if (s == KCRT_OK)
            memcpy((char *)dst + done, (const char *)d->staging.map + (offset + done - lo), n);
        done += n;
    }
    return s;
}
