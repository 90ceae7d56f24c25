/*
 * vk_memory.c — buffers and transfers.
 *
 * On a device with unified memory (integrated GPUs, CPU devices such as
 * lavapipe) a buffer lives in host-visible, coherent device memory, mapped
 * for its whole life, and a transfer is a memcpy. Elsewhere a buffer lives
 * in device-local memory and a transfer goes through one staging buffer per
 * device (grown on demand, up to STAGING_MAX; larger transfers go in
 * pieces) with a copy command. KCRT_VULKAN_STAGING=1 forces the staged path
 * on any device, so that the tests cover it on lavapipe.
 *
 * Ordering: every buffer remembers the last batch that uses it. A transfer
 * first waits for that batch (submitting it if it is still being recorded),
 * so a write never races a launch queued before it and a read sees its
 * results. Copies end with a barrier that makes their writes visible to
 * later dispatches, copies and the host.
 */
#include "vk_private.h"

#include <stdlib.h>
#include <string.h>

enum { STAGING_MAX = 16 << 20 };

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

void vk_mem_free(vk_dev *d, vk_mem *m)
{
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

/* ---- the API's buffers ------------------------------------------------------------------------------- */

kcrt_status vk_buffer_create(void *dev, size_t bytes, void **out)
{
    vk_dev *d = dev;
    if (d->lost)
        return rt_fail(d->ctx, KCRT_ERROR_DEVICE_ERROR, "the Vulkan device was lost earlier");
    vk_buf *b = calloc(1, sizeof(*b));
    if (!b)
        return rt_fail(d->ctx, KCRT_ERROR_OUT_OF_MEMORY, "out of memory");
    VkDeviceSize size = (bytes + 3) & ~(VkDeviceSize)3; /* fills and copies work in words */
    kcrt_status s = vk_mem_create(d, size,
                                  VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                  d->unified, &b->m);
    if (s == KCRT_OK && b->m.map)
        memset(b->m.map, 0, size);
    else if (s == KCRT_OK)
        s = run_once(d, record_fill, &(fill_op){b->m.buf, size});
    if (s != KCRT_OK) {
        vk_mem_free(d, &b->m);
        free(b);
        return s;
    }
    *out = b;
    return KCRT_OK;
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
    b->wrapped = true;
    *out = b;
    return KCRT_OK;
}

void vk_buffer_free(void *dev, void *buf)
{
    vk_dev *d = dev;
    vk_buf *b = buf;
    vk_wait_serial(d, b->last_serial); /* a pending launch may still use it */
    if (!b->wrapped)
        vk_mem_free(d, &b->m);
    free(b);
}

kcrt_status vk_buffer_write(void *dev, void *buf, size_t offset, const void *src, size_t bytes)
{
    vk_dev *d = dev;
    vk_buf *b = buf;
    kcrt_status s = vk_wait_serial(d, b->last_serial);
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
